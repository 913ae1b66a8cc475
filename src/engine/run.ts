import { type FailureKind, retryAt } from './backoff.ts';
import { type BudgetStop, RunBudget } from './budget.ts';
import { idempotencyKey } from './idempotency.ts';
import {
  type LedgerEntry,
  ledgerKey,
  type RunContext,
  type RunOutcome,
  type RunRecord,
  type Stall,
  type TriggerKind,
  type Update,
  type Wakeup,
} from './ports.ts';
import { hasBacklog, nextCheckpoint, planWindow, type Window } from './window.ts';

/** Why a window stopped before its end: a budget, or an upstream that asked for a pause. */
type Stop = BudgetStop | 'rate_limit';

/** How one window ended. */
type WindowResult =
  | { kind: 'complete'; delivered: Update[] }
  | {
      kind: 'incomplete';
      delivered: Update[];
      stop: Stop;
      /** With `rate_limit`: the upstream's reset time. */
      resumeAt?: number;
      /** With `sorted = "asc"`: every update stamped below this was handled. */
      handledBelow?: number;
      /** How far into the window this attempt got. */
      pages: number;
    }
  | {
      kind: 'failed';
      delivered: Update[];
      failure: FailureKind;
      error: string;
      retryAfter?: number;
    }
  | { kind: 'fenced' };

/** What a run did, for its history record and the stored state. */
interface Tally {
  windows: number;
  pages: number;
  records: number;
  skewMs: number | null;
  rateLimitedUntil: number | null;
}

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
  const tally: Tally = { windows: 0, pages: 0, records: 0, skewMs: null, rateLimitedUntil: null };
  const record = (outcome: RunOutcome, error: string | null = null): RunRecord => ({
    epoch,
    trigger,
    outcome,
    startedAt,
    finishedAt: ctx.now(),
    windows: tally.windows,
    pages: tally.pages,
    records: tally.records,
    error: error === null ? null : redact(ctx, `poller "${ctx.poller}": ${error}`),
    checkpoint: store.read().checkpoint,
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
  ): RunRecord => {
    const next = {
      failures,
      wakeup,
      skewMs: tally.skewMs,
      rateLimitedUntil: tally.rateLimitedUntil,
      stall,
    };
    if (store.finishRun(epoch, run, next)) return run;
    return fenced();
  };

  if (!holdsLease(ctx, epoch)) return fenced();
  // "Default: the first run's T" is stored at once: a first run that fails must not let the
  // next one start later and skip what happened in between.
  const initial = store.read().checkpoint;
  if (initial === null && !commit(ctx, epoch, config.start_from ?? startedAt, [])) return fenced();

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
    const result = await pollWindow(ctx, epoch, window, budget, tally);
    if (result.kind === 'fenced') return fenced();

    if (result.kind === 'failed') {
      if (!store.remember(epoch, result.delivered.map(toLedgerEntry))) return fenced();
      // A run that moved C retries at the base delay, so a flaky receiver cannot starve a
      // backlog; one that only delivered some records backs off, but not beyond a few seconds
      // (PARTIAL_PROGRESS_CAP), and one that achieved nothing backs off all the way.
      const failures =
        tally.windows > 0
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
      // Sorted oldest first, what was handled so far is a safe checkpoint (inclusive next query).
      const partial =
        result.handledBelow === undefined
          ? checkpoint
          : Math.min(result.handledBelow, window.to, T - config.lag_allowance);
      const saved =
        partial > checkpoint
          ? commit(ctx, epoch, partial, result.delivered)
          : store.remember(epoch, result.delivered.map(toLedgerEntry));
      if (!saved) return fenced();
      if (result.stop === 'rate_limit') {
        const at = result.resumeAt ?? ctx.now();
        const note = `the upstream's rate limit is spent until ${new Date(at).toISOString()}; continuing then`;
        return finish(record('continued', note), state.failures, { at, reason: 'continuation' });
      }
      const note = `stopped on the ${describeStop(result.stop)}; continuing`;
      const continuation: Wakeup = { at: ctx.now(), reason: 'continuation' };
      if (partial > checkpoint || tally.windows > 0)
        return finish(record('continued', note), 0, continuation);
      // C did not move. Going on is worth it only while each attempt at this window gets
      // further into it than the last; otherwise it would start over forever.
      const stall = { from: window.from, pages: result.pages };
      const deeper = state.stall?.from !== window.from || result.pages > state.stall.pages;
      if (tally.records > 0 && deeper)
        return finish(record('continued', note), state.failures, continuation, stall);
      const error = windowTooBig(ctx, window, result.stop, result.pages);
      const at = retryAt(ctx.now(), state.failures + 1, 'misconfigured', ctx.random);
      return finish(record('failed', error), state.failures + 1, {
        at,
        reason: 'retry',
        failure: 'misconfigured',
      });
    }

    const committed = nextCheckpoint(checkpoint, window, config.lag_allowance);
    if (!commit(ctx, epoch, committed, result.delivered)) return fenced();
    tally.windows += 1;

    if (!hasBacklog(window, checkpoint, committed)) return finish(record('success'), 0, null);
    if (ctx.now() - startedAt >= config.max_run) {
      const note = 'stopped on the max_run budget; continuing';
      return finish(record('continued', note), 0, { at: ctx.now(), reason: 'continuation' });
    }
  }
}

/**
 * The ledger keeps whole seconds below a window's start: many upstreams truncate `from` to
 * the second whatever precision they are sent, and would otherwise hand back, as new, an
 * update the ledger had already let go of.
 */
const LEDGER_GRAIN_MS = 1_000;

function ledgerFloor(ctx: RunContext, at: number): number {
  const grain = Math.max(LEDGER_GRAIN_MS, ctx.precision ?? 1);
  return Math.floor(at / grain) * grain;
}

/** Moves C, remembering the deliveries the next window can ask for again (R9). */
function commit(ctx: RunContext, epoch: number, checkpoint: number, delivered: Update[]): boolean {
  const pruneBelow = ledgerFloor(ctx, checkpoint - ctx.config.overlap);
  const remember = delivered.filter((u) => u.versionMs >= pruneBelow).map(toLedgerEntry);
  return ctx.store.commitWindow(epoch, checkpoint, remember, pruneBelow);
}

/** Requests every page of one window and delivers each update not already delivered. */
async function pollWindow(
  ctx: RunContext,
  epoch: number,
  window: Window,
  budget: RunBudget,
  tally: Tally,
): Promise<WindowResult> {
  const { store, config } = ctx;
  const seen = store.delivered(ledgerFloor(ctx, window.from));
  const delivered: Update[] = [];
  const retryable: string[] = [];
  const cursors = new Set<string>();
  let cursor: string | null = null;
  let page = 0;
  // While records arrive oldest first and nothing has failed, everything below the last
  // handled one is handled: a safe checkpoint if the window cannot finish in this run.
  let ordered = config.source.sorted === 'asc';
  let handledBelow: number | undefined;
  let lastVersion = Number.NEGATIVE_INFINITY;
  const incomplete = (stop: Stop, resumeAt?: number): WindowResult => ({
    kind: 'incomplete',
    delivered,
    stop,
    pages: page,
    ...(resumeAt === undefined ? {} : { resumeAt }),
    ...(ordered && retryable.length === 0 && handledBelow !== undefined ? { handledBelow } : {}),
  });

  for (;;) {
    if (tally.pages > 0 && config.source.page_delay !== undefined)
      await ctx.sleep?.(config.source.page_delay);
    // R12: once the upstream said its quota is spent, not one request before the reset.
    if (tally.rateLimitedUntil !== null && tally.rateLimitedUntil > ctx.now()) {
      return incomplete('rate_limit', tally.rateLimitedUntil);
    }
    const stop = budget.take(ctx.now());
    if (stop) return incomplete(stop);
    const result = await ctx.source.fetchPage(window, cursor);
    if (!holdsLease(ctx, epoch)) return { kind: 'fenced' };
    page += 1;
    tally.pages += 1;
    if (result.skewMs !== undefined) tally.skewMs = result.skewMs;
    if (result.ok && result.pauseUntil !== undefined) tally.rateLimitedUntil = result.pauseUntil;
    if (!result.ok) {
      if (result.kind === 'rate_limited' && result.retryAfter !== undefined)
        tally.rateLimitedUntil = result.retryAfter;
      const failure: FailureKind = result.kind === 'bad_response' ? 'transient' : result.kind;
      const retryAfter = result.retryAfter === undefined ? {} : { retryAfter: result.retryAfter };
      return {
        kind: 'failed',
        delivered,
        failure,
        error: `page ${page}: ${result.error}`,
        ...retryAfter,
      };
    }
    const [malformed] = result.malformed;
    if (malformed) {
      return {
        kind: 'failed',
        delivered,
        failure: 'transient',
        error: `page ${page}: a record cannot be read (${malformed.reason}); it blocks the window until fixed upstream`,
      };
    }

    for (const update of result.updates) {
      if (update.versionMs < lastVersion) ordered = false;
      lastVersion = update.versionMs;
      const key = ledgerKey(update.id, update.version);
      if (!seen.has(key)) {
        const stop = budget.take(ctx.now());
        if (stop) return incomplete(stop);
        const outcome = await ctx.deliverer.deliver(update, {
          idempotencyKey: idempotencyKey(ctx.poller, update.id, update.version),
          attempt: 1,
        });
        if (!holdsLease(ctx, epoch)) return { kind: 'fenced' };
        if (outcome.kind === 'misconfigured') {
          return {
            kind: 'failed',
            delivered,
            failure: 'misconfigured',
            error: `delivery: ${outcome.error}`,
          };
        }
        if (outcome.kind !== 'delivered') {
          retryable.push(`${update.id}@${update.version}: ${outcome.error}`);
          continue;
        }
        seen.add(key);
        delivered.push(update);
        tally.records += 1;
      }
      if (retryable.length === 0) handledBelow = update.versionMs;
    }
    if (result.next === null) break;
    if (cursors.has(result.next)) {
      return {
        kind: 'failed',
        delivered,
        failure: 'transient',
        error: `page ${page}: paging loop: the upstream sent a next page it had already sent in this window (${describeCursor(result.next)})`,
      };
    }
    cursors.add(result.next);
    cursor = result.next;
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

/** The most a run that delivered something but moved no checkpoint backs off (5 s · 2²). */
const PARTIAL_PROGRESS_CAP = 3;

function redact(ctx: RunContext, text: string): string {
  return ctx.redact ? ctx.redact(text) : text;
}

function holdsLease(ctx: RunContext, epoch: number): boolean {
  const lease = ctx.store.read().lease;
  return lease.held && lease.epoch === epoch;
}

function toLedgerEntry(update: Update): LedgerEntry {
  return { id: update.id, version: update.version, versionMs: update.versionMs };
}

function describeStop(stop: BudgetStop): string {
  return stop === 'max_run' ? 'max_run budget' : 'subrequest budget (max_subrequests)';
}

/** The advice for a window whose pages alone exceed what one run may do. */
function windowTooBig(ctx: RunContext, window: Window, stop: BudgetStop, pages: number): string {
  const from = new Date(window.from).toISOString();
  const advice = [
    ctx.config.source.sorted === 'asc'
      ? null
      : 'set source.sorted = "asc" if the upstream returns records oldest first',
    ctx.config.source.to_param === undefined
      ? 'set source.to_param and max_window to split it'
      : 'lower max_window',
    stop === 'max_run' ? 'raise max_run' : 'raise max_subrequests',
  ].filter((line): line is string => line !== null);
  return `the window from ${from} is too big for one run: it stopped on the ${describeStop(stop)} after ${pages} page(s) with nothing new to deliver, and would only start over. ${advice.join('; or ')}.`;
}

function describeCursor(cursor: string): string {
  return cursor.length > 80 ? `${cursor.slice(0, 80)}…` : cursor;
}
