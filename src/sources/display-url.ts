import { fromTemplate, type Reference } from '../config/interpolate.ts';
import type { SourceConfig } from '../config/schema.ts';
import type { Window } from '../engine/window.ts';
import { pageDraft } from './request/build.ts';

/**
 * Page URLs as they are shown in errors, status and logs: built from the config as written,
 * so a secret in the url or params appears as `${NAME}` however the URL would have encoded
 * its value (`+`, `%2F`, `%7B` but `|`, …). `config` is the source read (the main one, or the
 * deletions stream or listing derived from it); `at` is where its url and params are written
 * in the poller's raw config: ["source"], ["source", "deletions"] or ["reconcile"].
 */
export function displayUrl(
  config: SourceConfig,
  raw: unknown,
  references: readonly Reference[],
  at: readonly string[] = ['source'],
): (window: Window, cursor: string | null) => string {
  const { value: display, show } = fromTemplate(raw, references, (tokenized) => {
    const table = at.reduce<unknown>((value, key) => tableOf(value)[key], tokenized);
    const { url, params } = tableOf(table);
    return {
      ...config,
      url: typeof url === 'string' ? url : config.url,
      params: isStringRecord(params) ? params : config.params,
    };
  });
  return (window, cursor) => {
    try {
      return show(pageDraft(display, window, cursor).url.toString());
    } catch {
      return show(String(cursor));
    }
  };
}

/** `value` as a table to read keys from; nothing for anything else. */
function tableOf(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    value !== null &&
    typeof value === 'object' &&
    Object.values(value).every((item) => typeof item === 'string')
  );
}
