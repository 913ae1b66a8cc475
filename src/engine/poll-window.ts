import type { FailureKind } from './backoff.ts';
import type { RunBudget } from './budget.ts';
import { deliverPage } from './deliver-page.ts';
import { planDelivery } from './delivery-plan.ts';
import { deliveryKey, unreadableKey } from './idempotency.ts';
import { untilNearFuture } from './near-future.ts';
import { type PageStop, type PageTally, pages, type RoundPaging } from './page-stream.ts';
import { uniqueNew, withOlderFailing } from './page-updates.ts';
import {
  type LedgerEntry,
  ledgerKey,
  type MalformedRecord,
  type PollerStore,
  type RunContext,
  type Update,
} from './ports.ts';
import { rememberDelivered } from './remembered-ids.ts';
import type { Retrying } from './retrying.ts';
import { afterPage, safeBelow as sortedSafeBelow, startProgress } from './sorted-progress.ts';
import { changesJudge } from './unchanged.ts';
import { nextCheckpoint, type Precision, type Window } from './window.ts';
import { WindowFailing } from './window-failing.ts';
import { DeliveredLog, HandledKeys, ledgerEntries, RetryableList } from './window-memory.ts';

/** Why a window stopped before its end: a budget, or an upstream that asked for a pause. */
export type Stop = PageStop;

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

/** What a run did, for its history record and the stored state (pages: its PageTally). */
export interface Tally extends PageTally {
  windows: number;
  records: number;
  deadLettered: number;
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

/** `at` floored to the ledger's grain (a second, or the time format's unit if coarser). */
export function ledgerFloor(precision: Precision | undefined, at: number): number {
  const grain = Math.max(LEDGER_GRAIN_MS, precision?.step ?? 1);
  const floored = Math.floor(at / grain) * grain;
  // And down to what the time format sends for it (a bound in a zone, an hour shown twice).
  return precision ? Math.min(floored, precision.floor(at)) : floored;
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
export function straggle(store: Pick<PollerStore, 'read'>, tally: Tally): number {
  return Math.max(store.read().straggleMs, tally.straggleMs);
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
 * Takes every page of one window from its page stream (engine/page-stream.ts) and delivers
 * each update not already delivered (the ledger, R9/R10), keeping what the window handled.
 * Records the source cannot read become dead letters (R8).
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
  /** source.resume: the window is this round (engine/page-stream.ts runs it). */
  round?: RoundPaging,
): Promise<WindowResult> {
  const { store, config } = ctx;
  const below = straggle(store, tally);
  const since = ledgerFloor(ctx.precision, window.from - below);
  // What the ledger keeps after this window completes: only that is held for the window's
  // whole length; the rest of what was handled is let go page by page (memory O(page)).
  const complete = nextCheckpoint(window.from + config.overlap, window, config.lag_allowance);
  const keepFrom = ledgerFloor(ctx.precision, complete - config.overlap - below);
  const ledger = store.delivered(since);
  const seen = new HandledKeys(ledger, keepFrom);
  const loaded = WindowFailing.load(ctx, epoch, ledger);
  if (loaded === 'fenced') return { kind: 'fenced' };
  const { map: failing, older } = loaded;
  const delivered = new DeliveredLog(keepFrom);
  const retryable = new RetryableList();
  let page = 0;
  // While records arrive oldest first and all so far were handled, everything below the last
  // one is handled: a safe checkpoint if the window cannot finish in this run (never past a
  // version still failing: engine/sorted-progress.ts).
  let progress = startProgress(config.source.sorted === 'asc');
  const unkept = new UnkeptPages(ctx.now());
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

  const paging = {
    source: ctx.source,
    budget,
    tally,
    now: ctx.now,
    holds: () => holdsLease(ctx, epoch),
    pageDelay: config.source.page_delay,
    sleep: ctx.sleep,
    round,
  };
  // Leaving this loop, however, closes the stream: a page it asked for ahead is cancelled.
  for await (const step of pages(window, paging)) {
    if (step.kind === 'fenced') return { kind: 'fenced' };
    if (step.kind === 'stopped') return incomplete(step.stop, step.resumeAt);
    if (step.kind === 'failed') return failed(step.failure, step.error, step.retryAfter);
    page = step.number;
    const result = step.page;
    if (!deadLetterUnreadable(ctx, epoch, tally, result.malformed, page)) {
      return { kind: 'fenced' };
    }
    tally.straggleMs = Math.max(tally.straggleMs, straggleOf(window, result.updates));
    // Each key built once, for every lookup of this page.
    const keys = result.updates.map((update) => ledgerKey(update.id, update.version));
    const fresh = uniqueNew(result.updates, keys, seen);
    ctx.lateness?.seen(window, fresh.updates, failing); // measures the upstream's lag (engine/lateness.ts)
    const sent = withOlderFailing(fresh.updates, failing, seen, page === 1, loaded.tried());
    // deliver.changes_only: a version whose content is the one the receiver last got of
    // its id is handled without being sent, judged as its turn comes (engine/unchanged.ts).
    const judge = await changesJudge(ctx, sent);
    const plan = planDelivery(ctx, sent, sent === fresh.updates ? fresh.keys : undefined);
    step.askAhead(plan);
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
      unkept.add(unchangedEntries);
      unkept.add(deliveredEntries);
      if (!unkept.keepIfDue(store, epoch, ctx.now())) return { kind: 'fenced' };
    }
    delivered.add(deliveredEntries);
    tally.records += outcome.delivered.length;
    tally.deadLettered += outcome.deadLettered;
    tally.released += outcome.released;
    seen.addPage(outcome.handled);
    retryable.add(outcome.retryable);
    if (outcome.misconfigured) return failed('misconfigured', `delivery: ${outcome.misconfigured}`);

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
        unkept.clear(ctx.now());
      }
    }
    if (outcome.stop) return incomplete(outcome.stop);
  }

  // R19: every failure of the window is stored with its record (settleFailed, hold), so the
  // window may commit; the stored ones are retried first by every run. Not past the cap.
  const overCap = retryable.count > 0 ? loaded.overCap(retryable.describe()) : null;
  if (overCap !== null) return failed('transient', overCap);
  ctx.lateness?.covered(window);
  const retrying = leaveRetrying();
  return { kind: 'complete', delivered: delivered.entries(), ...(retrying ? { retrying } : {}) };
}

/**
 * What a window that goes on delivered and has not kept yet: kept (a row of ledger_pages)
 * once PAGES_KEPT_EVERY_MS passed since the last, so a crash redelivers little of it. The
 * entries alone: the records they came with are not held past their page.
 */
class UnkeptPages {
  private entries: LedgerEntry[] = [];

  constructor(private keptAt: number) {}

  add(entries: readonly LedgerEntry[]): void {
    for (const entry of entries) this.entries.push(entry);
  }

  /** Keeps them if it is time; false when the lease was lost (R6). */
  keepIfDue(store: Pick<PollerStore, 'rememberPage'>, epoch: number, now: number): boolean {
    if (this.entries.length === 0 || now - this.keptAt < PAGES_KEPT_EVERY_MS) return true;
    if (!store.rememberPage(epoch, untilNearFuture(this.entries, now))) return false;
    this.clear(now);
    return true;
  }

  /** Kept another way (the window's progress committed): none left to keep. */
  clear(now: number): void {
    this.entries = [];
    this.keptAt = now;
  }
}

/** Records the source could not read become dead letters (R8); false when fenced. */
function deadLetterUnreadable(
  ctx: Pick<RunContext, 'poller' | 'store' | 'now'>,
  epoch: number,
  tally: { deadLettered: number },
  malformed: readonly MalformedRecord[],
  page: number,
): boolean {
  for (const unreadable of malformed) {
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
    if (!ctx.store.deadLetter(epoch, letter)) return false;
    tally.deadLettered += 1;
  }
  return true;
}

/**
 * How far below the window a page answers (0 when it does not): the upstream truncates
 * `from` (or filters on another time). Learned, so that the ledger remembers that far down
 * and delivers such a record once.
 */
function straggleOf(window: Window, updates: readonly Update[]): number {
  let deepest = 0;
  for (const update of updates) {
    if (update.versionMs < window.from) {
      deepest = Math.max(deepest, straggleGrain(window.from - update.versionMs));
    }
  }
  return deepest;
}

export function holdsLease(ctx: RunContext, epoch: number): boolean {
  return ctx.store.holds(epoch);
}
