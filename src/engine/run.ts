import { type FailureKind, retryAt } from './backoff.ts';
import { type BudgetStop, RunBudget } from './budget.ts';
import { idempotencyKey } from './idempotency.ts';
import {
  type LedgerEntry,
  ledgerKey,
  type RunContext,
  type RunOutcome,
  type RunRecord,
  type TriggerKind,
  type Update,
  type Wakeup,
} from './ports.ts';
import { hasBacklog, nextCheckpoint, planWindow, type Window } from './window.ts';

/** How one window ended. */
type WindowResult =
  | { kind: 'complete'; delivered: Update[] }
  | { kind: 'incomplete'; delivered: Update[]; stop: BudgetStop }
  | {
      kind: 'failed';
      delivered: Update[];
      failure: FailureKind;
      error: string;
      retryAfter?: number;
    }
  | { kind: 'fenced' };

interface Tally {
  windows: number;
  pages: number;
  records: number;
}

/**
 * Runs the poll loop under the lease `epoch`, already marked running by the caller: window after window from the checkpoint,
 * committing C only when a window was handled in full (R1, R2), until caught up, failed,
 * or out of budget (R7, then a continuation, R3). Returns the run's history record.
 */
export async function runPoll(
  ctx: RunContext,
  epoch: number,
  trigger: TriggerKind,
): Promise<RunRecord> {
  const { config, store } = ctx;
  const startedAt = ctx.now();
  const budget = new RunBudget(startedAt, config.max_run, config.max_subrequests);
  const tally: Tally = { windows: 0, pages: 0, records: 0 };
  const record = (outcome: RunOutcome, error: string | null = null): RunRecord => ({
    epoch,
    trigger,
    outcome,
    startedAt,
    finishedAt: ctx.now(),
    ...tally,
    error,
    checkpoint: store.read().checkpoint,
  });
  const fenced = () => {
    const run = record('fenced', 'the lease was taken over by a newer run; nothing was committed');
    store.recordRun(run);
    return run;
  };

  if (!holdsLease(ctx, epoch)) return fenced();

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
    });
    const result = await pollWindow(ctx, epoch, window, budget, tally);

    if (result.kind === 'fenced') return fenced();
    if (result.kind !== 'complete') {
      if (!store.remember(epoch, result.delivered.map(toLedgerEntry))) return fenced();
      if (result.kind === 'incomplete') {
        return finish(
          ctx,
          epoch,
          record('continued', `stopped on the ${describeStop(result.stop)}; continuing`),
          {
            failures: state.failures,
            wakeup: { at: ctx.now(), reason: 'continuation' },
          },
        );
      }
      // Backoff grows only while runs make no progress: a run that delivered or committed
      // something retries at the base delay, so a flaky receiver cannot starve a backlog.
      const progressed = tally.records > 0 || tally.windows > 0;
      const failures = progressed ? 1 : state.failures + 1;
      const wakeup: Wakeup = {
        at: retryAt(ctx.now(), failures, result.failure, ctx.random, result.retryAfter),
        reason: 'retry',
        failure: result.failure,
      };
      return finish(ctx, epoch, record('failed', result.error), { failures, wakeup });
    }

    const committed = nextCheckpoint(checkpoint, window, config.lag_allowance);
    const pruneBelow = committed - config.overlap;
    const remember = result.delivered.filter((u) => u.versionMs >= pruneBelow).map(toLedgerEntry);
    if (!store.commitWindow(epoch, committed, remember, pruneBelow)) return fenced();
    tally.windows += 1;

    if (!hasBacklog(window, checkpoint, committed)) {
      return finish(ctx, epoch, record('success'), { failures: 0, wakeup: null });
    }
    if (ctx.now() - startedAt >= config.max_run) {
      return finish(ctx, epoch, record('continued', 'stopped on the max_run budget; continuing'), {
        failures: 0,
        wakeup: { at: ctx.now(), reason: 'continuation' },
      });
    }
  }
}

/** Requests every page of one window and delivers each update not already delivered. */
async function pollWindow(
  ctx: RunContext,
  epoch: number,
  window: Window,
  budget: RunBudget,
  tally: Tally,
): Promise<WindowResult> {
  const { store } = ctx;
  const seen = store.delivered(window.from);
  const delivered: Update[] = [];
  const retryable: string[] = [];
  let cursor: string | null = null;

  for (;;) {
    const stop = budget.take(ctx.now());
    if (stop) return { kind: 'incomplete', delivered, stop };
    const page = await ctx.source.fetchPage(window, cursor);
    if (!holdsLease(ctx, epoch)) return { kind: 'fenced' };
    tally.pages += 1;
    if (!page.ok) {
      const failure: FailureKind = page.kind === 'bad_response' ? 'transient' : page.kind;
      return {
        kind: 'failed',
        delivered,
        failure,
        error: `page ${tally.pages}: ${page.error}`,
        ...(page.retryAfter === undefined ? {} : { retryAfter: page.retryAfter }),
      };
    }
    const [malformed] = page.malformed;
    if (malformed) {
      return {
        kind: 'failed',
        delivered,
        failure: 'transient',
        error: `page ${tally.pages}: a record cannot be read (${malformed.reason}); it blocks the window until fixed upstream`,
      };
    }

    for (const update of page.updates) {
      const key = ledgerKey(update.id, update.version);
      if (seen.has(key)) continue;
      const stop = budget.take(ctx.now());
      if (stop) return { kind: 'incomplete', delivered, stop };
      const result = await ctx.deliverer.deliver(update, {
        idempotencyKey: idempotencyKey(ctx.poller, update.id, update.version),
        attempt: 1,
      });
      if (!holdsLease(ctx, epoch)) return { kind: 'fenced' };
      if (result.kind === 'delivered') {
        seen.add(key);
        delivered.push(update);
        tally.records += 1;
      } else if (result.kind === 'misconfigured') {
        return {
          kind: 'failed',
          delivered,
          failure: 'misconfigured',
          error: `delivery: ${result.error}`,
        };
      } else {
        retryable.push(`${update.id}@${update.version}: ${result.error}`);
      }
    }
    if (page.next === null) break;
    cursor = page.next;
  }

  if (retryable.length > 0) {
    const more = retryable.length > 1 ? ` (and ${retryable.length - 1} more)` : '';
    return {
      kind: 'failed',
      delivered,
      failure: 'transient',
      error: `${retryable.length} update(s) not delivered: ${retryable[0]}${more}`,
    };
  }
  return { kind: 'complete', delivered };
}

function holdsLease(ctx: RunContext, epoch: number): boolean {
  const lease = ctx.store.read().lease;
  return lease.held && lease.epoch === epoch;
}

function finish(
  ctx: RunContext,
  epoch: number,
  run: RunRecord,
  next: { failures: number; wakeup: Wakeup | null },
): RunRecord {
  if (!ctx.store.finishRun(epoch, run, next)) {
    const fenced: RunRecord = {
      ...run,
      outcome: 'fenced',
      error: 'the lease was taken over before the run finished',
    };
    ctx.store.recordRun(fenced);
    return fenced;
  }
  return run;
}

function toLedgerEntry(update: Update): LedgerEntry {
  return { id: update.id, version: update.version, versionMs: update.versionMs };
}

function describeStop(stop: BudgetStop): string {
  return stop === 'max_run' ? 'max_run budget' : 'subrequest budget (max_subrequests)';
}
