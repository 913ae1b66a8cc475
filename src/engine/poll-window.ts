import type { FailureKind } from './backoff.ts';
import type { BudgetStop, RunBudget } from './budget.ts';
import { deliverPage } from './deliver-page.ts';
import { planDelivery } from './delivery-plan.ts';
import { deliveryKey, unreadableKey } from './idempotency.ts';
import { type Fetched, lookAhead, settled } from './look-ahead.ts';
import { untilNearFuture } from './near-future.ts';
import { uniqueNew, withOlderFailing } from './page-updates.ts';
import { type LedgerEntry, ledgerKey, type PageResult, type RunContext } from './ports.ts';
import { rememberDelivered } from './remembered-ids.ts';
import type { Retrying } from './retrying.ts';
import { afterPage, safeBelow as sortedSafeBelow, startProgress } from './sorted-progress.ts';
import { changesJudge } from './unchanged.ts';
import { nextCheckpoint, type Window } from './window.ts';
import { WindowFailing } from './window-failing.ts';
import { DeliveredLog, HandledKeys, ledgerEntries, RetryableList } from './window-memory.ts';

/** Why a window stopped before its end: a budget, or an upstream that asked for a pause. */
export type Stop = BudgetStop | 'rate_limit';

/** How one window ended. */
export type WindowResult =
  | {
      kind: 'complete';
      delivered: LedgerEntry[];
      /**
       * R19: updates of this stream left failing, each stored with its record and retried
       * first by every run (the window commits all the same), and why the first one failed.
       */
      retrying?: Retrying;
    }
  | {
      kind: 'incomplete';
      delivered: LedgerEntry[];
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
      delivered: LedgerEntry[];
      failure: FailureKind;
      error: string;
      retryAfter?: number;
      /** With `sorted = "asc"`: every update stamped below this was handled. */
      handledBelow?: number;
    }
  | { kind: 'fenced' };

/** What a run did, for its history record and the stored state. */
export interface Tally {
  windows: number;
  pages: number;
  records: number;
  deadLettered: number;
  skewMs: number | null;
  rateLimitedUntil: number | null;
  /** How far below its window's `from` the deepest record of this run was stamped. */
  straggleMs: number;
  /** Held-back updates (a budget stop mid-page, an older version first) delivered by this run. */
  released: number;
  /** deliver.changes_only: newer versions with the content last delivered, not sent. */
  unchanged: number;
  /**
   * R19: per stream (its RunContext.stream, `main` for the main one), the updates left failing
   * by its last complete window: stored, retried by the next run, the run `partial`.
   */
  retrying: Map<string, Retrying>;
}

/**
 * The ledger keeps whole seconds below a window's start: many upstreams truncate `from` to
 * the second whatever precision they are sent, and would otherwise hand back, as new, an
 * update the ledger had already let go of.
 */
const LEDGER_GRAIN_MS = 1_000;

export function ledgerFloor(ctx: RunContext, at: number): number {
  const grain = Math.max(LEDGER_GRAIN_MS, ctx.precision ?? 1);
  return Math.floor(at / grain) * grain;
}

/**
 * How far below `from` an upstream that answers below it is taken to answer: the depth seen,
 * rounded up to the grain it most likely truncates `from` to (a second, a minute, an hour).
 * With the whole grain remembered, each such record is delivered once (after the run that
 * learned the grain). Deeper than an hour, the ledger stops stretching: such records are
 * delivered again by later windows (at least once), never lost.
 */
const STRAGGLE_GRAINS_MS = [1_000, 60_000, 3_600_000];

function straggleGrain(depth: number): number {
  return STRAGGLE_GRAINS_MS.find((grain) => depth <= grain) ?? 3_600_000;
}

/** How far below `from` the upstream answers: as stored, or deeper if this run saw it. */
export function straggle(ctx: RunContext, tally: Tally): number {
  return Math.max(ctx.store.read().straggleMs, tally.straggleMs);
}

/**
 * How often a window that goes on keeps what it delivered (one row, ledger_pages). A write
 * makes the object's next outgoing request wait until it is stored (the output gate), so
 * a write per page would slow a fast upstream by a commit per page: against a real API a
 * page takes longer than this and every page is kept; when pages come faster, a crash
 * delivers again at most this much of them, besides the page in flight.
 */
export const PAGES_KEPT_EVERY_MS = 50;

const NO_HASHES: ReadonlyMap<string, string> = new Map();

/**
 * Requests every page of one window and delivers each update not already delivered (the
 * ledger, R9/R10). Records the source cannot read become dead letters (R8).
 */
export async function pollWindow(
  ctx: RunContext,
  epoch: number,
  window: Window,
  budget: RunBudget,
  tally: Tally,
  /**
   * With `sorted = "asc"`, called after each page with the point below which everything is
   * handled: the run commits it at once, so a crash or a budget stop keeps that progress.
   * Says whether it committed, or that the lease was lost.
   */
  onProgress?: (
    handledBelow: number,
    /** What the window delivered so far: asked for only when it commits (a copy each time). */
    delivered: () => LedgerEntry[],
  ) => 'committed' | 'unchanged' | 'fenced',
): Promise<WindowResult> {
  const { store, config } = ctx;
  const below = straggle(ctx, tally);
  const since = ledgerFloor(ctx, window.from - below);
  // What the ledger keeps after this window completes: only that is held for the window's
  // whole length; the rest of what was handled is let go page by page (memory O(page)).
  const complete = nextCheckpoint(window.from + config.overlap, window, config.lag_allowance);
  const keepFrom = ledgerFloor(ctx, complete - config.overlap - below);
  const ledger = store.delivered(since);
  const seen = new HandledKeys(ledger, keepFrom);
  const loaded = WindowFailing.load(ctx, epoch, ledger);
  if (loaded === 'fenced') return { kind: 'fenced' };
  const { map: failing, older } = loaded;
  const delivered = new DeliveredLog(keepFrom);
  const retryable = new RetryableList();
  const cursors = new Set<string>();
  let cursor: string | null = null;
  let page = 0;
  // While records arrive oldest first and all so far were handled, everything below the last
  // one is handled: a safe checkpoint if the window cannot finish in this run (never past a
  // version still failing: engine/sorted-progress.ts).
  let progress = startProgress(config.source.sorted === 'asc');
  // What this window delivered and has not kept yet (see PAGES_KEPT_EVERY_MS).
  let unkept: LedgerEntry[] = [];
  let keptAt = ctx.now();
  const safeBelow = (): { handledBelow?: number } => {
    const below = sortedSafeBelow(progress, loaded.bounds());
    return below === undefined ? {} : { handledBelow: below };
  };
  const stream = ctx.stream ?? 'main';
  /** What this stream leaves failing, for the run's outcome (`partial`) and its retry. */
  const leaveRetrying = () => loaded.leave(tally.retrying, stream, retryable.example());
  const incomplete = (stop: Stop, resumeAt?: number): WindowResult => {
    leaveRetrying();
    return {
      kind: 'incomplete',
      delivered: delivered.entries(),
      stop,
      pages: page,
      ...(resumeAt === undefined ? {} : { resumeAt }),
      ...safeBelow(),
    };
  };
  const failed = (failure: FailureKind, error: string, retryAfter?: number): WindowResult => ({
    kind: 'failed',
    delivered: delivered.entries(),
    failure,
    error,
    ...(retryAfter === undefined ? {} : { retryAfter }),
    ...safeBelow(),
  });

  // The next page, asked for while this one's deliveries are in flight (see lookAhead). A
  // window that ends before taking it cancels it: no request of this run outlives it (the
  // next run's first request would overlap it).
  let ahead: Promise<Fetched> | null = null;
  let cancelAhead: AbortController | null = null;
  try {
    for (;;) {
      let result: PageResult;
      if (ahead !== null) {
        const fetched = await ahead;
        ahead = null;
        cancelAhead = null;
        if (!fetched.ok) throw fetched.error;
        // Asked for early: it counts only if the loop could have asked for it now. A run out
        // of time leaves it, as it would have left it unasked (the rest was checked then).
        if (budget.expired(ctx.now())) return incomplete('max_run');
        result = fetched.page;
      } else {
        if (tally.pages > 0 && config.source.page_delay !== undefined) {
          await ctx.sleep?.(config.source.page_delay);
        }
        // R12: once the upstream said its quota is spent, not one request before the reset.
        if (tally.rateLimitedUntil !== null && tally.rateLimitedUntil > ctx.now()) {
          return incomplete('rate_limit', tally.rateLimitedUntil);
        }
        const stop = budget.take(ctx.now());
        if (stop) return incomplete(stop);
        result = await ctx.source.fetchPage(window, cursor);
      }
      if (!holdsLease(ctx, epoch)) return { kind: 'fenced' };
      page += 1;
      tally.pages += 1;
      if (result.skewMs !== undefined) tally.skewMs = result.skewMs;
      if (!result.ok) {
        if (result.kind === 'rate_limited' && result.retryAfter !== undefined) {
          tally.rateLimitedUntil = result.retryAfter;
        }
        const failure: FailureKind = result.kind === 'bad_response' ? 'transient' : result.kind;
        return failed(failure, `page ${page}: ${result.error}`, result.retryAfter);
      }
      if (result.pauseUntil !== undefined) tally.rateLimitedUntil = result.pauseUntil;

      for (const unreadable of result.malformed) {
        const now = ctx.now();
        const letter = {
          key: unreadableKey(ctx.poller, unreadable.raw),
          kind: 'unreadable' as const,
          id: null,
          version: null,
          versionMs: null,
          record: unreadable.raw,
          error: `page ${page}: ${unreadable.reason}`,
          attempts: 1,
          firstFailure: now,
          lastFailure: now,
        };
        if (!store.deadLetter(epoch, letter)) return { kind: 'fenced' };
        tally.deadLettered += 1;
      }

      for (const update of result.updates) {
        // Stamped below the window: the upstream truncates `from` (or filters on another
        // time). Learned, so that the ledger remembers that far down and delivers it once.
        if (update.versionMs < window.from) {
          const grain = straggleGrain(window.from - update.versionMs);
          tally.straggleMs = Math.max(tally.straggleMs, grain);
        }
      }
      // Each key built once, for every lookup of this page.
      const keys = result.updates.map((update) => ledgerKey(update.id, update.version));
      const fresh = uniqueNew(result.updates, keys, seen);
      ctx.lateness?.seen(window, fresh.updates, failing); // measures the upstream's lag (engine/lateness.ts)
      const sent = withOlderFailing(fresh.updates, failing, seen, page === 1, loaded.tried());
      // deliver.changes_only: a version whose content is the one the receiver last got of
      // its id is handled without being sent, judged as its turn comes (engine/unchanged.ts).
      const judge = await changesJudge(ctx, sent);
      const plan = planDelivery(ctx, sent, sent === fresh.updates ? fresh.keys : undefined);
      if (lookAhead(ctx, result, plan, budget, tally.rateLimitedUntil, cursors)) {
        cancelAhead = new AbortController();
        ahead = settled(ctx.source.fetchPage(window, result.next, cancelAhead.signal));
      }
      const outcome = await deliverPage(ctx, epoch, plan, failing, older, budget, judge);
      if (outcome.fenced) return { kind: 'fenced' };
      const { unchanged } = outcome;
      const handled =
        unchanged.length === 0 ? outcome.delivered : [...unchanged, ...outcome.delivered];
      if (!(await rememberDelivered(ctx, epoch, handled, judge?.hashes ?? NO_HASHES))) {
        return { kind: 'fenced' };
      }
      const unchangedEntries = ledgerEntries(unchanged);
      if (unchanged.length > 0) {
        delivered.add(unchangedEntries);
        tally.unchanged += unchanged.length;
      }
      // One entry per delivered update, shared by the window's log and the pages kept.
      const deliveredEntries = ledgerEntries(outcome.delivered);
      // The pages of a window that goes on are kept as they are delivered (a row): a crash
      // redelivers the page in flight, not the window so far. The last page's go with the
      // window's commit; a listing's upserts, with the reconciliation's own tables.
      if (result.next !== null && ctx.stream !== 'listing') {
        // The entries alone: the records they came with are not held past their page.
        for (const entry of unchangedEntries) unkept.push(entry);
        for (const entry of deliveredEntries) unkept.push(entry);
        const now = ctx.now();
        if (unkept.length > 0 && now - keptAt >= PAGES_KEPT_EVERY_MS) {
          if (!store.rememberPage(epoch, untilNearFuture(unkept, now))) return { kind: 'fenced' };
          unkept = [];
          keptAt = now;
        }
      }
      delivered.add(deliveredEntries);
      tally.records += outcome.delivered.length;
      tally.deadLettered += outcome.deadLettered;
      tally.released += outcome.released;
      seen.addPage(outcome.handled);
      retryable.add(outcome.retryable);
      if (outcome.misconfigured)
        return failed('misconfigured', `delivery: ${outcome.misconfigured}`);

      // Nothing of this page failing, held or cut short: every update on it is handled.
      const everyHandled = outcome.retryable.length === 0 && outcome.stop === undefined;
      progress = afterPage(
        progress,
        result.updates,
        (update, i) =>
          everyHandled ||
          seen.has(keys[i] ?? '', update.versionMs) ||
          (loaded.stored() && failing.has(deliveryKey(ctx, update))),
      );
      const safe = safeBelow().handledBelow;
      if (safe !== undefined && onProgress) {
        const progress = onProgress(safe, () => delivered.entries());
        if (progress === 'fenced') return { kind: 'fenced' };
        // Committed: what the next window can ask for again is in the ledger now.
        if (progress === 'committed') {
          delivered.clear();
          unkept = [];
          keptAt = ctx.now();
        }
      }
      if (outcome.stop) return incomplete(outcome.stop);
      if (result.next === null) break;
      if (cursors.has(result.next)) {
        const shown = result.next.length > 80 ? `${result.next.slice(0, 80)}…` : result.next;
        return failed(
          'transient',
          `page ${page}: paging loop: the upstream sent a next page it had already sent in this window (${shown})`,
        );
      }
      cursors.add(result.next);
      cursor = result.next;
    }

    // R19: every failure of the window is stored with its record (settleFailed, hold), so the
    // window may commit; the stored ones are retried first by every run. Not past the cap.
    const overCap = retryable.count > 0 ? loaded.overCap(retryable.describe()) : null;
    if (overCap !== null) return failed('transient', overCap);
    ctx.lateness?.covered(window);
    const retrying = leaveRetrying();
    return { kind: 'complete', delivered: delivered.entries(), ...(retrying ? { retrying } : {}) };
  } finally {
    cancelAhead?.abort(new DOMException('the window ended before this page', 'AbortError'));
  }
}

export function holdsLease(ctx: RunContext, epoch: number): boolean {
  return ctx.store.holds(epoch);
}
