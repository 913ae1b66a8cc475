import type { FailureKind } from './backoff.ts';
import type { BudgetStop, RunBudget } from './budget.ts';
import { deliverChildren } from './children.ts';
import { deadLetterUnreadable } from './dead-letter-unreadable.ts';
import { deliveryKey } from './idempotency.ts';
import { type PageStop, type PageTally, pages, type RoundPaging } from './page-stream.ts';
import { uniqueNew, withOlderFailing } from './page-updates.ts';
import {
  type LedgerEntry,
  ledgerKey,
  type PollerStore,
  type RunContext,
  type Update,
} from './ports.ts';
import type { Retrying } from './retrying.ts';
import { afterPage, safeBelow as sortedSafeBelow, startProgress } from './sorted-progress.ts';
import { nextCheckpoint, type Precision, type Window } from './window.ts';
import { type Handling, UnkeptPages, WindowDeliveries } from './window-deliveries.ts';
import { WindowFailing } from './window-failing.ts';
import { DeliveredLog, HandledKeys, RetryableList } from './window-memory.ts';

/**
 * source.children: how close below the last window's T a parent's stamp must be for its
 * children to be listed again when a window shows it at the same version: stamps in whole
 * seconds leave a child's change within that second unseen in its parent's version.
 */
const RELIST_GRAIN_MS = 1_000;

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
  /** source.children: the requests for children (pages of them), of `pages`. */
  childRequests: number;
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

export { PAGES_KEPT_EVERY_MS } from './window-deliveries.ts';

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
  // source.children: the parents windows before handled, whose children are listed again
  // once when a page shows them at the same version, stamped within a second of the last
  // window's T (copied: `seen` adds to the ledger).
  const relist = config.source.children === undefined ? new Set<string>() : new Set(ledger);
  // The last window's T: a parent stamped at or after it in the ledger was handled by an
  // earlier attempt of this window (a budget stop, a crash), not listed again.
  const lastT = window.from + config.overlap + config.lag_allowance;
  const relistFrom = lastT - RELIST_GRAIN_MS;
  const seen = new HandledKeys(ledger, keepFrom);
  const loaded = WindowFailing.load(ctx, epoch, ledger);
  if (loaded === 'fenced') return { kind: 'fenced' };
  const { map: failing } = loaded;
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
  const deliveries = new WindowDeliveries(ctx, epoch, budget, tally, {
    seen,
    loaded,
    delivered,
    unkept,
    retryable,
  });
  const children = ctx.children ? config.source.children : undefined;
  // Leaving this loop, however, closes the stream: a page it asked for ahead is cancelled.
  for await (const step of pages(window, paging)) {
    if (step.kind === 'fenced') return { kind: 'fenced' };
    if (step.kind === 'stopped') return incomplete(step.stop, step.resumeAt);
    if (step.kind === 'failed') return failed(step.failure, step.error, step.retryAfter);
    page = step.number;
    const result = step.page;
    if (!deadLetterUnreadable(ctx, epoch, tally, result.malformed, `page ${page}`)) {
      return { kind: 'fenced' };
    }
    tally.straggleMs = Math.max(tally.straggleMs, straggleOf(window, result.updates));
    // Each key built once, for every lookup of this page.
    const keys = result.updates.map((update) => ledgerKey(update.id, update.version));
    const fresh = uniqueNew(result.updates, keys, seen);
    ctx.lateness?.seen(window, fresh.updates, failing); // measures the upstream's lag (engine/lateness.ts)
    // The pages of a window that goes on are kept as they are delivered: the last page's go
    // with the window's commit; a listing's upserts, with the reconciliation's own tables.
    const keep = result.next !== null && ctx.stream !== 'listing';
    let everyHandled = true;
    let stop: BudgetStop | undefined;
    const handle = async (sent: Update[], how: Handling): Promise<WindowResult | null> => {
      const batch = await deliveries.deliver(sent, how);
      if (batch.kind === 'fenced') return { kind: 'fenced' };
      if (batch.kind === 'misconfigured')
        return failed('misconfigured', `delivery: ${batch.error}`);
      everyHandled &&= batch.everyHandled;
      stop ??= batch.stop;
      return null;
    };
    const tried = loaded.tried();
    if (children === undefined) {
      const sent = withOlderFailing(fresh.updates, failing, seen, page === 1, tried);
      const exit = await handle(sent, {
        keys: sent === fresh.updates ? fresh.keys : undefined,
        ledger: true,
        keep,
        askAhead: (plan) => step.askAhead(plan),
      });
      if (exit) return exit;
    } else {
      // The window's first page retries first what is still failing from runs before.
      const retried = withOlderFailing([], failing, seen, page === 1, tried);
      const first = retried.length > 0 ? await handle(retried, { ledger: true, keep }) : null;
      if (first) return first;
      // What failed since the page began (the retries above, a child page before) is not
      // tried again in this run either: once per run (R19).
      const triedNow = () => (failing.size === 0 ? tried : loaded.tried());
      // Each parent counts as handled (the ledger) only once its every child page was. A
      // parent a window before handled, listed again at the same version and stamped within
      // RELIST_GRAIN_MS of that window's T, has its children listed again (not itself handled
      // again): a child changed in the same second as its parent, after that listing, leaves
      // the stamp as it was (the per-id memory sends only what changed).
      const freshKeys = new Set(fresh.keys);
      for (const [i, parent] of result.updates.entries()) {
        if (stop !== undefined) break;
        const key = keys[i] ?? '';
        const isFresh = freshKeys.delete(key);
        const near = parent.versionMs >= relistFrom && parent.versionMs < lastT;
        if (!isFresh && !(relist.has(key) && near)) continue;
        relist.delete(key);
        // A parent retried just above (deliver_parents: it failed after its children were
        // handled, in a run before) is handled: neither it nor its children go again.
        if (isFresh && retried.length > 0 && seen.has(key, parent.versionMs)) continue;
        const deliver = (kids: Update[]) =>
          deliveries.deliver(withOlderFailing(kids, failing, seen, false, triedNow()), {
            ledger: false,
            keep: false,
          });
        const listing = { ctx, epoch, window, parent, paging, deliver, tally };
        const end = await deliverChildren(listing, failing);
        if (end.kind === 'fenced') return end;
        if (end.kind === 'stopped') return incomplete(end.stop, end.resumeAt);
        if (end.kind === 'failed') return failed(end.failure, end.error, end.retryAfter);
        if (end.kind === 'misconfigured') return failed('misconfigured', `delivery: ${end.error}`);
        if (!isFresh) continue;
        const silent = !children.deliver_parents;
        const sent = withOlderFailing([parent], failing, seen, false, triedNow());
        const exit = await handle(sent, { ledger: true, keep, silent });
        if (exit) return exit;
      }
    }
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
    if (stop) return incomplete(stop);
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
