import type { RoundPaging } from './page-stream.ts';
import type { RunContext, WindowCommit } from './ports.ts';
import { planWindow, type Window, type WindowPlan } from './window.ts';

/**
 * A run's next window: planned from C (engine/window.ts), and with source.resume the round it
 * is (`startRound`), which the page stream runs instead of a time range.
 */
export function nextWindow(
  ctx: RunContext,
  epoch: number,
  plan: WindowPlan,
): { window: Window; round?: RoundPaging } {
  const planned = planWindow(plan);
  return startRound(ctx, epoch, planned) ?? { window: planned };
}

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
    expire: (reason) => store.expire(epoch, ctx.now(), reason),
  };
  return { window: { ...window, round: { token: state.token } }, round };
}

/** Adds to a window's commit what a round that ended stores with it: its token (R20). */
export function endRound(done: WindowCommit, round: RoundPaging | undefined, now: number): void {
  if (round?.token != null) done.round = { token: round.token, at: now };
}
