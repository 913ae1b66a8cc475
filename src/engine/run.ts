import { sendsWindowEnd } from '../config/request-fields.ts';
import { decideAfterWindow } from './after-window.ts';
import { retryAt } from './backoff.ts';
import { RunBudget } from './budget.ts';
import { untilNearFuture } from './near-future.ts';
import { holdsLease, ledgerFloor, pollWindow, straggle, type Tally } from './poll-window.ts';
import type {
  LedgerEntry,
  Reconciler,
  RunContext,
  RunOutcome,
  RunRecord,
  Stall,
  TriggerKind,
  Wakeup,
  WindowCommit,
} from './ports.ts';
import { endRound, nextWindow } from './rounds.ts';
import { progressToCommit } from './sorted-progress.ts';

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
  const run = new Run(ctx, epoch, trigger);
  try {
    return await run.loop();
  } catch (error) {
    // Whatever went wrong, expected or not, ends as a failed run: in the history and status,
    // the lease released and a retry booked with the usual backoff. Left to escape, it would
    // hold the lease until it expires and then crash the same way again.
    const failures = ctx.store.read().failures + 1;
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    const at = retryAt(ctx.now(), failures, 'transient', ctx.random);
    return run.finish(run.record('failed', `the run failed unexpectedly: ${reason}`), failures, {
      at,
      reason: 'retry',
      failure: 'transient',
    });
  }
}

/** One run: its budget and tally, the loop over windows, and how it ends. */
class Run {
  private readonly startedAt: number;
  private readonly budget: RunBudget;
  private readonly tally: Tally = {
    windows: 0,
    pages: 0,
    records: 0,
    deadLettered: 0,
    skewMs: null,
    rateLimitedUntil: null,
    straggleMs: 0,
    released: 0,
    unchanged: 0,
    childRequests: 0,
    retrying: new Map(),
  };

  constructor(
    private readonly ctx: RunContext,
    private readonly epoch: number,
    private readonly trigger: TriggerKind,
  ) {
    this.startedAt = ctx.now();
    this.budget = new RunBudget(this.startedAt, ctx.config.max_run, ctx.config.max_subrequests);
  }

  /**
   * The main stream, window after window until caught up; then the deletions stream
   * (source.deletions), so a delete goes after every update of its id this run delivers;
   * then the reconciliation's turn (reconcile). A stream that fails or runs out of budget
   * ends the run there.
   */
  async loop(): Promise<RunRecord> {
    const { ctx, epoch } = this;
    if (!holdsLease(ctx, epoch)) return this.fenced();
    const main = await this.stream(ctx);
    if (main.kind === 'ended') return main.run;
    const deletions = ctx.deletions ?? null;
    const reconcile = ctx.reconcile ?? null;
    // A run that ends with this window commits it with its finish: one write, not two.
    if (deletions === null && reconcile === null) {
      const partial = this.partial(main.done.checkpoint);
      if (partial)
        return this.finish(partial.run, partial.failures, partial.wakeup, null, main.done);
      return this.finish(
        this.record('success', null, main.done.checkpoint),
        0,
        null,
        null,
        main.done,
      );
    }
    if (!this.commitDone(ctx, main.done)) return this.fenced();
    if (deletions !== null) {
      const stream = await this.stream(deletions);
      if (stream.kind === 'ended') return stream.run;
      if (!this.commitDone(deletions, stream.done)) return this.fenced();
    }
    let wakeup: Wakeup | null = null;
    if (reconcile !== null) {
      const turn = await this.reconcile(reconcile);
      if (turn === 'fenced') return this.fenced();
      wakeup = turn;
    }
    const partial = wakeup ? null : this.partial();
    if (partial) return this.finish(partial.run, partial.failures, partial.wakeup);
    const run = this.record(wakeup ? 'continued' : 'success', wakeup ? CONTINUE_LISTING : null);
    return this.finish(run, 0, wakeup);
  }

  /**
   * A run that caught up with updates left failing (R19): `partial`, its windows committed,
   * and a retry booked for them with the usual backoff: at the base delay when this run
   * delivered something, growing while it delivers nothing (a receiver that is down). Null
   * when nothing is left failing.
   */
  private partial(
    checkpoint?: number | null,
    /** A window cut short: where it would have continued, and why it stopped. */
    cut?: { wakeup: Wakeup; note: string },
  ): { run: RunRecord; failures: number; wakeup: Wakeup } | null {
    const { ctx, tally } = this;
    const left = [...tally.retrying.values()];
    // A window cut short with only held-back updates (none refused) simply continues.
    if (left.length === 0 || (cut && !left.some((entry) => entry.failed))) return null;
    const count = left.reduce((sum, entry) => sum + entry.count, 0);
    const then = cut ? `; ${cut.note}` : '';
    const error = `${count} update(s) failing, stored and retried by the next run: ${left.map((entry) => entry.error).join('; ')}${then}`;
    const failures = tally.records > 0 ? 1 : ctx.store.read().failures + 1;
    const at = retryAt(ctx.now(), failures, 'transient', ctx.random, cut?.wakeup.at);
    const wakeup: Wakeup = { at, reason: 'retry', failure: 'transient' };
    return { run: this.record('partial', error, checkpoint), failures, wakeup };
  }

  /**
   * The reconciliation's turn: until the poller's next tick (or a nudge) wants the lease,
   * so it never holds the incremental polls up for more than a page. Its failures are its
   * own (kept in its state, retried with backoff): they never fail the run. Returns the
   * wakeup of a listing cut short by the run's budget, or null.
   */
  private async reconcile(reconciler: Reconciler): Promise<Wakeup | null | 'fenced'> {
    const { ctx, epoch, budget, tally } = this;
    const until = Math.min(
      ctx.store.read().nextTickAt ?? Number.POSITIVE_INFINITY,
      this.startedAt + ctx.config.max_run,
    );
    const step = await reconciler.work(ctx, epoch, budget, until);
    if (step.kind === 'fenced') return 'fenced';
    tally.records += step.delivered;
    tally.deadLettered += step.deadLettered;
    if (step.error !== null) {
      ctx.log?.({
        event: 'reconcile_failed',
        level: 'warn',
        poller: ctx.poller,
        error: step.error,
      });
      return null;
    }
    if (step.more && ctx.now() < until) return { at: ctx.now(), reason: 'continuation' };
    return null;
  }

  /**
   * One stream's windows, from its checkpoint until caught up (its last window handled, not
   * committed yet: `done`), or until the run ended (failed, continued, fenced: `run`).
   */
  private async stream(
    sctx: RunContext,
  ): Promise<{ kind: 'caught_up'; done: WindowCommit } | { kind: 'ended'; run: RunRecord }> {
    const { epoch, budget, tally } = this;
    const { config, store } = sctx;
    const ended = (run: RunRecord) => ({ kind: 'ended' as const, run });
    // What this stream did in this run, apart from the streams before it: whether it moved
    // or got further into its window is its own (engine/after-window.ts).
    const before = { windows: tally.windows, records: tally.records, released: tally.released };
    // "Default: the first run's T" is stored at once: a first run that fails must not let the
    // next one start later and skip what happened in between.
    if (
      store.read().checkpoint === null &&
      !this.commit(sctx, config.start_from ?? this.startedAt, [])
    ) {
      return ended(this.fenced());
    }

    // The upstream takes the window's end (to_param or {to}): windows are bounded.
    const bounded = sendsWindowEnd(config.source);
    for (;;) {
      const state = store.read();
      const T = sctx.now();
      const checkpoint = state.checkpoint ?? config.start_from ?? T;
      // With source.resume, the window is a round from the stored token (engine/rounds.ts).
      const { window, round } = nextWindow(sctx, epoch, {
        checkpoint,
        overlap: config.overlap,
        maxWindow: config.max_window,
        bounded,
        now: T,
        ...(sctx.precision ? { precision: sctx.precision } : {}),
      });
      // Progress committed as a sorted window goes (C only ever moves forward).
      let committed = checkpoint;
      let lastCommitAt = sctx.now();
      const onProgress = (handledBelow: number, delivered: () => LedgerEntry[]) => {
        const now = sctx.now();
        const at = progressToCommit({
          handledBelow,
          committed,
          window,
          T,
          now,
          lastCommitAt,
          lagAllowance: config.lag_allowance,
          everyMs: PROGRESS_EVERY_MS,
        });
        if (at === null) return 'unchanged' as const;
        lastCommitAt = now;
        if (!this.commit(sctx, at, delivered())) return 'fenced' as const;
        committed = at;
        return 'committed' as const;
      };
      const spentBefore = budget.subrequests;
      const result = await pollWindow(sctx, epoch, window, budget, tally, onProgress, round);
      if (result.kind === 'fenced') return ended(this.fenced());
      const next = decideAfterWindow({
        result,
        window,
        checkpoint,
        T,
        tally: {
          windows: tally.windows - before.windows,
          records: tally.records - before.records,
          released: tally.released - before.released,
        },
        lagAllowance: config.lag_allowance,
        failures: state.failures,
        stall: state.stall,
        now: sctx.now(),
        random: sctx.random,
        outOfTime: sctx.now() - this.startedAt >= config.max_run,
        budgetRemaining: budget.remaining,
        windowCost: budget.subrequests - spentBefore,
        sorted: config.source.sorted === 'asc',
        bounded,
      });
      if (next.kind === 'failed' || next.kind === 'incomplete' || next.kind === 'stall') {
        // What it handled is kept either way: C moves up to it, or its deliveries go into the
        // ledger, so the retry skips them.
        const saved =
          next.keep > committed
            ? this.commit(sctx, next.keep, result.delivered)
            : store.remember(epoch, untilNearFuture(result.delivered, sctx.now()));
        if (!saved) return ended(this.fenced());
        const stall = next.kind === 'incomplete' ? next.stall : null;
        // A window cut short with updates left failing (R19): its continuation waits for their
        // retry, with backoff, so a receiver that is down does not spend their attempts within
        // a burst of continuations.
        const partial = next.kind === 'incomplete' ? this.partial(undefined, next) : null;
        if (partial) {
          return ended(
            this.finish(partial.run, partial.failures, partial.wakeup, stall, undefined, sctx),
          );
        }
        const run =
          next.kind === 'incomplete'
            ? this.record('continued', next.note)
            : this.record('failed', next.error);
        return ended(this.finish(run, next.failures, next.wakeup, stall, undefined, sctx));
      }
      const done = windowCommit(sctx, next.checkpoint, result.delivered, tally);
      // A full round that found deletes to confirm: the round that confirms them goes next.
      const again = endRound(done, round, sctx.now());
      tally.windows += 1;
      // A window that left updates failing ends the stream's turn (R19): its next window would
      // retry them at once, and a receiver that is down would spend their attempts within one
      // run. The run's retry, with backoff, takes them and the rest of a backlog.
      if ((next.kind === 'done' && !again) || (result.kind === 'complete' && result.retrying)) {
        return { kind: 'caught_up', done };
      }
      if (next.kind === 'budget') {
        // The main stream's last window goes with the run's finish (one write); another
        // stream's, to its own store first.
        if (sctx !== this.ctx && !this.commitDone(sctx, done)) return ended(this.fenced());
        const run = this.record('continued', next.note, this.ctx.store.read().checkpoint);
        const commit = sctx === this.ctx ? done : undefined;
        return ended(this.finish(run, 0, next.wakeup, null, commit, sctx));
      }
      if (!this.commitDone(sctx, done)) return ended(this.fenced());
    }
  }

  /** The run's history record as it stands. */
  record(outcome: RunOutcome, error: string | null = null, checkpoint?: number | null): RunRecord {
    const { ctx, tally } = this;
    return {
      epoch: this.epoch,
      trigger: this.trigger,
      outcome,
      startedAt: this.startedAt,
      finishedAt: ctx.now(),
      windows: tally.windows,
      pages: tally.pages,
      records: tally.records,
      deadLettered: tally.deadLettered,
      ...(tally.unchanged > 0 ? { unchanged: tally.unchanged } : {}),
      ...(tally.childRequests > 0 ? { childRequests: tally.childRequests } : {}),
      error: error === null ? null : redact(ctx, `poller "${ctx.poller}": ${error}`),
      checkpoint: checkpoint === undefined ? ctx.store.read().checkpoint : checkpoint,
    };
  }

  /**
   * Ends the run (history, wakeup, backoff state), with its last window's commit if any,
   * through the store of the stream that ended it (`sctx`): a stream's stall is its own.
   */
  finish(
    run: RunRecord,
    failures: number,
    wakeup: Wakeup | null,
    stall: Stall | null = null,
    commit?: WindowCommit,
    sctx: RunContext = this.ctx,
  ): RunRecord {
    const { tally } = this;
    const next = {
      failures,
      wakeup,
      skewMs: tally.skewMs,
      rateLimitedUntil: tally.rateLimitedUntil,
      stall,
      straggleMs: tally.straggleMs,
    };
    if (sctx.store.finishRun(this.epoch, run, next, commit)) return run;
    return this.fenced();
  }

  /** The lease was taken over: nothing is committed, the history says so (R6). */
  private fenced(): RunRecord {
    const run = this.record(
      'fenced',
      'the lease was taken over by a newer run; nothing was committed',
    );
    this.ctx.store.recordRun(run);
    return run;
  }

  /** Moves a stream's C, remembering the deliveries its next window can ask for again (R9). */
  private commit(sctx: RunContext, checkpoint: number, delivered: LedgerEntry[]): boolean {
    return this.commitDone(sctx, windowCommit(sctx, checkpoint, delivered, this.tally));
  }

  private commitDone(sctx: RunContext, done: WindowCommit): boolean {
    const { checkpoint, remember, pruneBelow, round } = done;
    return sctx.store.commitWindow(this.epoch, checkpoint, remember, pruneBelow, round);
  }
}

/** What moving C to `checkpoint` keeps of the ledger and prunes from it (R9). */
function windowCommit(
  ctx: RunContext,
  checkpoint: number,
  delivered: LedgerEntry[],
  tally: Tally,
): WindowCommit {
  const pruneBelow = ledgerFloor(
    ctx.precision,
    checkpoint - ctx.config.overlap - straggle(ctx.store, tally),
  );
  const remember = delivered.filter((entry) => entry.versionMs >= pruneBelow);
  return { checkpoint, remember: untilNearFuture(remember, ctx.now()), pruneBelow };
}

/** A run whose reconciliation listing wants more than the run's budget had left. */
const CONTINUE_LISTING = 'the reconciliation listing goes on in a continuation';

/** How often a sorted window commits its progress while it goes. */
export const PROGRESS_EVERY_MS = 30_000;

function redact(ctx: RunContext, text: string): string {
  return ctx.redact ? ctx.redact(text) : text;
}

export { FAR_FUTURE_MS } from './near-future.ts';
