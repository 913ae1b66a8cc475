import { fromTemplate, type Reference } from '../config/interpolate.ts';
import type { SourceConfig } from '../config/schema.ts';
import type { Window } from '../engine/window.ts';
import { pageDraft } from './request/build.ts';

/**
 * Page URLs as they are shown in errors, status and logs: built from the config as written,
 * so a secret in `source.url` or `source.params` appears as `${NAME}` however the URL would
 * have encoded its value (`+`, `%2F`, …).
 */
export function displayUrl(
  config: SourceConfig,
  raw: unknown,
  references: readonly Reference[],
): (window: Window, cursor: string | null) => string {
  const { value: display, show } = fromTemplate(raw, references, (tokenized) => {
    const source = (tokenized as { source?: { url?: unknown; params?: unknown } }).source ?? {};
    return {
      ...config,
      url: typeof source.url === 'string' ? source.url : config.url,
      params: isStringRecord(source.params) ? source.params : config.params,
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

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    value !== null &&
    typeof value === 'object' &&
    Object.values(value).every((item) => typeof item === 'string')
  );
}
