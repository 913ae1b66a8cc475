import type { RoundPaging } from './page-stream.ts';
import type { RoundCommit, RunContext, WindowCommit } from './ports.ts';
import { roundListing } from './round-listing.ts';
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
  const listing = roundListing(ctx, epoch);
  // resync_deletes: the round that confirms a full round's deletes lists in full too; the
  // token stored before it stays (what changed since is asked for from it: a delete in
  // between included, which its own token would leave out).
  const keeps =
    state.token !== null && state.tokenAt !== null && listing?.confirming() === true
      ? { token: state.token, at: state.tokenAt }
      : null;
  const round: RoundPaging = {
    cursor: state.cursor,
    pages: state.pages,
    keep: (cursor, pages) => store.keepCursor(epoch, cursor, pages),
    token: null,
    expire: (reason) => store.expire(epoch, ctx.now(), reason),
    listing,
    ...(keeps === null ? {} : { keeps }),
  };
  const token = keeps === null ? state.token : null;
  return { window: { ...window, round: { token } }, round };
}

/**
 * Adds to a window's commit what a round that ended stores with it: its token (R20), or the
 * one a confirming round keeps. Answers whether a second full round is due at once.
 */
export function endRound(done: WindowCommit, round: RoundPaging | undefined, now: number): boolean {
  if (round?.token == null) return false;
  const kept: RoundCommit | undefined = round.keeps;
  done.round = kept ?? { token: round.token, at: now };
  return round.again === true;
}
