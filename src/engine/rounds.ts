import type { RoundPaging } from './page-stream.ts';
import type { RoundCommit, RunContext } from './ports.ts';
import type { Window } from './window.ts';

/**
 * source.resume: the round a window is (R20). It starts from the stored token, or from
 * source.url when there is none, and at the page cursor a run before kept; its token is
 * stored only with the commit of the window that handled its every page.
 */
export function startRound(
  ctx: RunContext,
  epoch: number,
  window: Window,
): { window: Window; round: RoundPaging } | null {
  const store = ctx.store.rounds;
  if (ctx.config.source.resume === undefined || store === undefined || ctx.stream !== undefined) {
    return null;
  }
  const state = store.read();
  const round: RoundPaging = {
    cursor: state.cursor,
    pages: state.pages,
    keep: (cursor, pages) => store.keepCursor(epoch, cursor, pages),
    token: null,
  };
  return { window: { ...window, round: { token: state.token } }, round };
}

/** What a round that ended stores with its window's commit: its token (none if it failed). */
export function roundCommit(round: RoundPaging | undefined, now: number): RoundCommit | undefined {
  return round?.token == null ? undefined : { token: round.token, at: now };
}
