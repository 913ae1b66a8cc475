import { retryAt } from './backoff.ts';
import { RunBudget } from './budget.ts';
import { isoTime } from './iso-time.ts';
import {
  holdsLease,
  ledgerFloor,
  pollWindow,
  type Stop,
  straggle,
  type Tally,
} from './poll-window.ts';
import type {
  LedgerEntry,
  RunContext,
  RunOutcome,
  RunRecord,
  Stall,
  TriggerKind,
  Wakeup,
  WindowCommit,
} from './ports.ts';
import { hasBacklog, nextCheckpoint, planWindow, type Window } from './window.ts';

/**
 * Runs the poll loop under the lease `epoch`, already marked running by the caller:
 * window after window from the checkpoint, committing C only when a window was handled in
 * full (R1, R2), until caught up, failed, or out of budget (R7, then a continuation, R3).
 * Returns the run's history record.
 */
export async function runPoll(
  ctx: RunContext,
  epoch: number,
  trigger: TriggerKind,
): Promise<RunRecord> {
  const { config, store } = ctx;
  const startedAt = ctx.now();
  const budget = new RunBudget(startedAt, config.max_run, config.max_subrequests);
  const tally: Tally = {
    windows: 0,
    pages: 0,
    records: 0,
    deadLettered: 0,
    skewMs: null,
    rateLimitedUntil: null,
    straggleMs: 0,
    released: 0,
  };
  const record = (
    outcome: RunOutcome,
    error: string | null = null,
    checkpoint = store.read().checkpoint,
  ): RunRecord => ({
    epoch,
    trigger,
    outcome,
    startedAt,
    finishedAt: ctx.now(),
    windows: tally.windows,
    pages: tally.pages,
    records: tally.records,
    deadLettered: tally.deadLettered,
    error: error === null ? null : redact(ctx, `poller "${ctx.poller}": ${error}`),
    checkpoint,
  });
  const fenced = () => {
    const run = record('fenced', 'the lease was taken over by a newer run; nothing was committed');
    store.recordRun(run);
    return run;
  };
  const finish = (
    run: RunRecord,
    failures: number,
    wakeup: Wakeup | null,
    stall: Stall | null = null,
    commit?: WindowCommit,
  ): RunRecord => {
    const next = {
      failures,
      wakeup,
      skewMs: tally.skewMs,
      rateLimitedUntil: tally.rateLimitedUntil,
      stall,
      straggleMs: tally.straggleMs,
    };
    if (store.finishRun(epoch, run, next, commit)) return run;
    return fenced();
  };

  try {
    return await pollWindows(ctx, epoch, startedAt, budget, tally, record, finish, fenced);
  } catch (error) {
    // Whatever went wrong, expected or not, ends as a failed run: in the history and status,
    // the lease released and a retry booked with the usual backoff. Left to escape, it would
    // hold the lease until it expires and then crash the same way again.
    const failures = store.read().failures + 1;
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const at = retryAt(ctx.now(), failures, 'transient', ctx.random);
    return finish(record('failed', `the run failed unexpectedly: ${reason}`), failures, {
      at,
      reason: 'retry',
      failure: 'transient',
    });
  }
}

/** The run's loop: window after window until caught up, failed, or out of budget. */
async function pollWindows(
  ctx: RunContext,
  epoch: number,
  startedAt: number,
  budget: RunBudget,
  tally: Tally,
  record: (outcome: RunOutcome, error?: string | null, checkpoint?: number | null) => RunRecord,
  finish: (
    run: RunRecord,
    failures: number,
    wakeup: Wakeup | null,
    stall?: Stall | null,
    commit?: WindowCommit,
  ) => RunRecord,
  fenced: () => RunRecord,
): Promise<RunRecord> {
  const { config, store } = ctx;
  if (!holdsLease(ctx, epoch)) return fenced();
  // "Default: the first run's T" is stored at once: a first run that fails must not let the
  // next one start later and skip what happened in between.
  const initial = store.read().checkpoint;
  if (initial === null && !commit(ctx, epoch, config.start_from ?? startedAt, [], tally))
    return fenced();

  for (;;) {
    const state = store.read();
    const T = ctx.now();
    const checkpoint = state.checkpoint ?? config.start_from ?? T;
    const window = planWindow({
      checkpoint,
      overlap: config.overlap,
      maxWindow: config.max_window,
      bounded: config.source.to_param !== undefined,
      now: T,
      precision: ctx.precision ?? 1,
    });
    // Progress committed as a sorted window goes (C only ever moves forward), at most every
    // PROGRESS_EVERY_MS: often enough that a crash loses little, rarely enough that the
    // ledger's boundary second is not rewritten page after page.
    let committed = checkpoint;
    let lastProgress = ctx.now();
    const onProgress = (handledBelow: number, delivered: LedgerEntry[]) => {
      if (ctx.now() - lastProgress < PROGRESS_EVERY_MS) return 'unchanged' as const;
      const partial = partialCheckpoint(handledBelow, committed, window, T, config.lag_allowance);
      if (partial <= committed) return 'unchanged' as const;
      lastProgress = ctx.now();
      if (!commit(ctx, epoch, partial, delivered, tally)) return 'fenced' as const;
      committed = partial;
      return 'committed' as const;
    };
    const spentBefore = budget.subrequests;
    const result = await pollWindow(ctx, epoch, window, budget, tally, onProgress);
    if (result.kind === 'fenced') return fenced();

    // A window that did not complete keeps what it did: sorted oldest first, C moves up to
    // what was handled (so a flaky upstream slows a backlog down instead of stopping it);
    // either way its deliveries go into the ledger, so the retry skips them.
    const keep = (handledBelow: number | undefined, delivered: LedgerEntry[]) => {
      const partial = partialCheckpoint(handledBelow, checkpoint, window, T, config.lag_allowance);
      const saved =
        partial > committed
          ? commit(ctx, epoch, partial, delivered, tally)
          : store.remember(epoch, untilNearFuture(delivered, ctx.now()));
      return saved ? partial : null;
    };

    if (result.kind === 'failed') {
      const partial = keep(result.handledBelow, result.delivered);
      if (partial === null) return fenced();
      // A run that moved C retries at the base delay, so a flaky receiver cannot starve a
      // backlog; one that only delivered some records backs off, but not beyond a few seconds
      // (PARTIAL_PROGRESS_CAP), and one that achieved nothing backs off all the way.
      const failures =
        tally.windows > 0 || partial > checkpoint
          ? 1
          : tally.records > 0
            ? Math.min(state.failures + 1, PARTIAL_PROGRESS_CAP)
            : state.failures + 1;
      const at = retryAt(ctx.now(), failures, result.failure, ctx.random, result.retryAfter);
      return finish(record('failed', result.error), failures, {
        at,
        reason: 'retry',
        failure: result.failure,
      });
    }

    if (result.kind === 'incomplete') {
      const partial = keep(result.handledBelow, result.delivered);
      if (partial === null) return fenced();
      const moved = partial > checkpoint || tally.windows > 0;
      // A rate limit resumes at the upstream's reset; a budget stop at once.
      const resumeAt = result.stop === 'rate_limit' ? (result.resumeAt ?? ctx.now()) : ctx.now();
      const note =
        result.stop === 'rate_limit'
          ? `the upstream's rate limit is spent until ${isoTime(resumeAt)}; continuing then`
          : `stopped on the ${describeStop(result.stop)}; continuing`;
      const continuation: Wakeup = { at: resumeAt, reason: 'continuation' };
      if (moved) return finish(record('continued', note), 0, continuation);
      // C did not move. Going on is worth it only while each attempt at this window gets
      // further into it than the last; otherwise it would start over forever.
      const stall = { from: window.from, pages: result.pages };
      // Delivering updates a budget stop held back is progress too: they are stored, and
      // each is delivered once, so this cannot go on forever.
      const deeper =
        state.stall?.from !== window.from || result.pages > state.stall.pages || tally.released > 0;
      if ((tally.records > 0 || result.stop === 'rate_limit') && deeper) {
        return finish(record('continued', note), state.failures, continuation, stall);
      }
      const error = windowTooBig(ctx, window, result.stop, result.pages);
      const at = Math.max(
        retryAt(ctx.now(), state.failures + 1, 'misconfigured', ctx.random),
        resumeAt,
      );
      return finish(record('failed', error), state.failures + 1, {
        at,
        reason: 'retry',
        failure: 'misconfigured',
      });
    }

    const complete = nextCheckpoint(checkpoint, window, config.lag_allowance);
    const done = windowCommit(ctx, complete, result.delivered, tally);
    tally.windows += 1;

    // A run that ends with this window commits it with its finish: one write, not two.
    if (!hasBacklog(window, checkpoint, complete)) {
      return finish(record('success', null, complete), 0, null, null, done);
    }
    // A next window that would not fit in what is left of the budget would stop half-way and
    // be fetched again from its first page: better to continue in a fresh invocation now.
    const windowCost = budget.subrequests - spentBefore;
    const outOfTime = ctx.now() - startedAt >= config.max_run;
    if (outOfTime || budget.remaining < windowCost) {
      const note = outOfTime
        ? 'stopped on the max_run budget; continuing'
        : 'stopped before a window that would not fit in the subrequest budget; continuing';
      const continuation: Wakeup = { at: ctx.now(), reason: 'continuation' };
      return finish(record('continued', note, complete), 0, continuation, null, done);
    }
    if (!store.commitWindow(epoch, done.checkpoint, done.remember, done.pruneBelow)) {
      return fenced();
    }
  }
}

/**
 * With records sorted oldest first, everything stamped below the last handled one is handled:
 * C can move there (the next query is inclusive; the ledger drops the boundary repeats).
 */
function partialCheckpoint(
  handledBelow: number | undefined,
  checkpoint: number,
  window: Window,
  T: number,
  lagAllowance: number,
): number {
  if (handledBelow === undefined) return checkpoint;
  return Math.max(checkpoint, Math.min(handledBelow, window.to, T - lagAllowance));
}

/** Moves C, remembering the deliveries the next window can ask for again (R9). */
function commit(
  ctx: RunContext,
  epoch: number,
  checkpoint: number,
  delivered: LedgerEntry[],
  tally: Tally,
): boolean {
  const done = windowCommit(ctx, checkpoint, delivered, tally);
  return ctx.store.commitWindow(epoch, done.checkpoint, done.remember, done.pruneBelow);
}

/** What moving C to `checkpoint` keeps of the ledger and prunes from it (R9). */
function windowCommit(
  ctx: RunContext,
  checkpoint: number,
  delivered: LedgerEntry[],
  tally: Tally,
): WindowCommit {
  const pruneBelow = ledgerFloor(ctx, checkpoint - ctx.config.overlap - straggle(ctx, tally));
  const remember = delivered.filter((entry) => entry.versionMs >= pruneBelow);
  return { checkpoint, remember: untilNearFuture(remember, ctx.now()), pruneBelow };
}

/** Versions stamped further ahead of our clock than this are an upstream's clock bug. */
export const FAR_FUTURE_MS = 24 * 3_600_000;

/**
 * A version stamped far in the future (an upstream clock bug: the year 2999) would stay in
 * the ledger forever, loaded by every window. It is remembered as if stamped FAR_FUTURE_MS
 * from now, so it is pruned a day later (the upstream, still showing it, then has it
 * delivered again: about once a day, never lost, and the ledger stays bounded).
 */
function untilNearFuture(entries: LedgerEntry[], now: number): LedgerEntry[] {
  const latest = now + FAR_FUTURE_MS;
  if (!entries.some((entry) => entry.versionMs > latest)) return entries;
  return entries.map((entry) =>
    entry.versionMs > latest ? { ...entry, versionMs: latest } : entry,
  );
}

/** How often a sorted window commits its progress while it goes. */
export const PROGRESS_EVERY_MS = 30_000;

/** The most a run that delivered something but moved no checkpoint backs off (5 s · 2²). */
const PARTIAL_PROGRESS_CAP = 3;

function redact(ctx: RunContext, text: string): string {
  return ctx.redact ? ctx.redact(text) : text;
}

function describeStop(stop: Stop): string {
  if (stop === 'rate_limit') return "upstream's rate limit";
  return stop === 'max_run' ? 'max_run budget' : 'subrequest budget (max_subrequests)';
}

/** The advice for a window whose pages alone exceed what one run may do. */
function windowTooBig(ctx: RunContext, window: Window, stop: Stop, pages: number): string {
  const from = isoTime(window.from);
  const advice = [
    ctx.config.source.sorted === 'asc'
      ? null
      : 'set source.sorted = "asc" if the upstream returns records oldest first',
    ctx.config.source.to_param === undefined
      ? 'set source.to_param and max_window to split it'
      : 'lower max_window',
    stop === 'max_run'
      ? 'raise max_run'
      : stop === 'rate_limit'
        ? 'ask the upstream for a larger rate limit'
        : 'raise max_subrequests',
  ].filter((line): line is string => line !== null);
  return `the window from ${from} is too big for one run: it stopped on the ${describeStop(stop)} after ${pages} page(s) without getting further into it than the attempt before, and would only start over. ${advice.join('; or ')}.`;
}
