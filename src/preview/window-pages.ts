import type { PageResult, Source } from '../engine/ports.ts';
import type { Window } from '../engine/window.ts';

/** How much a preview reads at most. */
export interface PreviewLimits {
  pages: number;
  records: number;
}

/**
 * The pages of one window as a run asks for them (`source.fetchPage`, each page's cursor
 * sent for the next), until the window ends, a page fails, the upstream's rate-limit quota
 * is spent, or a limit is reached. `before(page)` runs before each request (page_delay, the
 * lease still held) and ends the pages when it answers false. The preview's one page loop.
 */
export async function* windowPages(
  source: Source,
  window: Window,
  limits: PreviewLimits,
  before: (page: number) => Promise<boolean>,
): AsyncGenerator<PageResult> {
  let cursor: string | null = null;
  let records = 0;
  for (let page = 0; page < limits.pages && records < limits.records; page += 1) {
    if (!(await before(page))) return;
    const result = await source.fetchPage(window, cursor);
    yield result;
    if (!result.ok || result.next === null || result.pauseUntil !== undefined) return;
    records += result.updates.length + result.malformed.length;
    cursor = result.next;
  }
}
