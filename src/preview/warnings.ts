import type { PollerConfig } from '../config/schema.ts';
import { isoTime } from '../engine/iso-time.ts';
import type { MalformedRecord, PageResult, Update } from '../engine/ports.ts';
import type { Window } from '../engine/window.ts';
import { readPath } from '../sources/dot-path.ts';

/** What a preview found that a run would get wrong or fail on, by kind. */
export type WarningKind =
  | 'page_error'
  | 'paging_loop'
  | 'body_errors'
  | 'next_path_never_present'
  | 'next_more_never_present'
  | 'next_stop_never_present'
  | 'outside_window'
  | 'out_of_order'
  | 'malformed'
  | 'future'
  | 'precision'
  | 'children_failed'
  | 'children_missing';

/** One warning: its kind (for tools) and what it means (for people). */
export interface PreviewWarning {
  kind: WarningKind;
  message: string;
}

/** A page the preview read: what the source made of it, its body (parsed), and when it came. */
export interface SeenPage {
  result: PageResult;
  /** The body as JSON, for what a page says beside its records; undefined when not read whole. */
  body: unknown;
  /** Our clock when the page had come. */
  at: number;
}

/** A stamp this far ahead of our clock is "in the future": beyond any clock skew worth a word. */
export const FUTURE_SLACK_MS = 60_000;
/** Examples a warning names, at most. */
const EXAMPLES = 3;

/**
 * Everything the pages show that a run would get wrong: pages that failed or carry errors,
 * next-page body paths no page had, records outside the window, out of the declared order,
 * unreadable, stamped in the future, and stamps too coarse for the lag_allowance.
 */
export function previewWarnings(
  config: PollerConfig,
  window: Window,
  pages: readonly SeenPage[],
): PreviewWarning[] {
  return [
    ...pageProblems(pages),
    ...nextPathsNeverPresent(config, pages),
    ...recordProblems(config, window, pages),
  ];
}

function pageProblems(pages: readonly SeenPage[]): PreviewWarning[] {
  const warnings: PreviewWarning[] = [];
  pages.forEach(({ result, body }, index) => {
    if (!result.ok) {
      warnings.push({
        kind: 'page_error',
        message: `page ${index + 1} was answered with an error (${result.kind}), so a run would fail here and keep its checkpoint: ${result.error}`,
      });
      return;
    }
    const errors = readPath(body, 'errors');
    if (isNonEmpty(errors)) {
      warnings.push({
        kind: 'body_errors',
        message: `page ${index + 1} has "errors" in its body (${snippet(errors)}): its records may be incomplete (a GraphQL API answers errors with 200)`,
      });
    }
  });
  return warnings;
}

/**
 * source.next's body paths (`path`, `more`, `stop`) that no page's body had: misspelt, a path
 * reads as "no next page" and every window stops at its first page. `path` counts only pages
 * with records (an empty last page may leave it out), the others every page that was read.
 */
function nextPathsNeverPresent(config: PollerConfig, pages: readonly SeenPage[]): PreviewWarning[] {
  const read = pages.filter((page) => page.result.ok && page.body !== undefined);
  if (read.length === 0) return [];
  const next: Record<string, unknown> = config.source.next;
  const withRecords = read.filter(
    (page) => page.result.ok && page.result.updates.length + page.result.malformed.length > 0,
  );
  const checks: [WarningKind, string, readonly SeenPage[], string][] = [
    [
      'next_path_never_present',
      'path',
      withRecords,
      'a page without it is taken as the last of its window, so if it is misspelt every window stops at its first page and the checkpoint moves past the rest',
    ],
    ['next_more_never_present', 'more', read, 'it never says whether more pages follow'],
    ['next_stop_never_present', 'stop', read, 'it never says which page is the last'],
  ];
  const warnings: PreviewWarning[] = [];
  for (const [kind, key, among, why] of checks) {
    const path = next[key];
    if (typeof path !== 'string' || among.length === 0) continue;
    if (among.some((page) => readPath(page.body, path) !== undefined)) continue;
    warnings.push({
      kind,
      message: `source.next.${key} "${path}" was in no page's body (${among.length} read): ${why}. Check it against the upstream's response`,
    });
  }
  return warnings;
}

function recordProblems(
  config: PollerConfig,
  window: Window,
  pages: readonly SeenPage[],
): PreviewWarning[] {
  const warnings: PreviewWarning[] = [];
  const updates: { update: Update; at: number }[] = [];
  const malformed: MalformedRecord[] = [];
  for (const { result, at } of pages) {
    if (!result.ok) continue;
    for (const update of result.updates) updates.push({ update, at });
    malformed.push(...result.malformed);
  }
  if (malformed.length > 0) {
    warnings.push({
      kind: 'malformed',
      message: `${count(malformed.length, 'record')} cannot be read (no id, or no updated_at a run can parse): a run would keep each as a dead letter. ${examples(malformed.map((record) => record.reason))}`,
    });
  }
  const before = updates.filter(({ update }) => update.versionMs < window.from);
  const after = window.bounded ? updates.filter(({ update }) => update.versionMs >= window.to) : [];
  if (before.length + after.length > 0) {
    const outside = [...before, ...after].map(({ update }) => stamp(update));
    const end = window.bounded ? isoTime(window.to) : 'now';
    warnings.push({
      kind: 'outside_window',
      message: `${count(before.length + after.length, 'record')} stamped outside the window [${isoTime(window.from)}, ${end}) (${before.length} before, ${after.length} after): the upstream may not filter on updated_at, or reads the bounds in another format or time zone (source.from_param, to_param, time_format). ${examples(outside)}`,
    });
  }
  if (config.source.sorted === 'asc') {
    const back = updates.findIndex(
      ({ update }, index) =>
        index > 0 && update.versionMs < (updates[index - 1]?.update.versionMs ?? 0),
    );
    const earlier = updates[back - 1]?.update;
    const later = updates[back]?.update;
    if (back > 0 && earlier && later) {
      warnings.push({
        kind: 'out_of_order',
        message: `source.sorted = "asc", but ${stamp(later)} came after ${stamp(earlier)}: a run commits progress through a sorted window, and would move the checkpoint past records it has not read. Remove source.sorted, or sort the upstream's answer oldest first`,
      });
    }
  }
  const future = updates.filter(({ update, at }) => update.versionMs > at + FUTURE_SLACK_MS);
  if (future.length > 0) {
    warnings.push({
      kind: 'future',
      message: `${count(future.length, 'record')} stamped more than ${FUTURE_SLACK_MS / 1000} s ahead of this Worker's clock: updated_at may be read in the wrong time zone or unit (updated_at_format). ${examples(future.map(({ update }) => stamp(update)))}`,
    });
  }
  const coarse = coarseStamps(updates.map(({ update }) => update));
  if (coarse && config.lag_allowance < 1000) {
    warnings.push({
      kind: 'precision',
      message: `every updated_at read is in whole seconds, and lag_allowance is ${config.lag_allowance} ms: an update stamped in the second a run starts but written after it is missed (R1). Set lag_allowance to at least "1s"`,
    });
  }
  return warnings;
}

/** Whether the stamps are whole seconds, by enough of them to tell (a few could be by chance). */
function coarseStamps(updates: readonly Update[]): boolean {
  return updates.length >= 5 && updates.every((update) => update.versionMs % 1000 === 0);
}

function stamp(update: Update): string {
  return `id ${update.id} at ${update.version}`;
}

function examples(items: readonly string[]): string {
  const shown = [...new Set(items)].slice(0, EXAMPLES);
  return `${items.length > 1 ? 'e.g. ' : ''}${shown.join('; ')}`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function isNonEmpty(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  return value !== null && typeof value === 'object' && Object.keys(value).length > 0;
}

function snippet(value: unknown): string {
  const text = JSON.stringify(value) ?? '';
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}
