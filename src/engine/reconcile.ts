import { retryAt } from './backoff.ts';
import type { RunBudget } from './budget.ts';
import { deliverPage, olderFailing } from './deliver-page.ts';
import { planDelivery } from './delivery-plan.ts';
import { mainFailures, ownFailures } from './idempotency.ts';
import {
  completeListing,
  type ListingRules,
  listingRules,
  withNewListing,
} from './listing-complete.ts';
import {
  type DeliveryOp,
  ledgerKey,
  type Reconciler,
  type ReconcileState,
  type ReconcileStep,
  type ReconcileStore,
  type RunContext,
  type Source,
  type Update,
} from './ports.ts';
import { listedIds } from './reconcile-diff.ts';
import { sortPending } from './reconcile-pending.ts';
import type { FetchById } from './reconcile-ports.ts';
import { rememberDelivered } from './remembered-ids.ts';

/** Failures in a row of a listing's pages after which the listing starts over. */
export const LISTING_RESTART_AFTER = 5;

/** Changes delivered per step: what a reconciliation holds in memory at once. */
export const PENDING_PER_STEP = 100;

/** The window a listing is asked for with: everything, up to now. */
function everything(now: number) {
  return { from: 0, to: now, bounded: false, startedAt: now, cut: false };
}

/**
 * Reconciliation (reconcile): a full listing of every id, page by page across runs, after
 * the streams are caught up. When one completes, and only then:
 * - an id delivered and not deleted, delivered before the listing began (minus
 *   lag_allowance), that the listing lacks, is a delete, delivered once confirmed (R16):
 *   reconcile.fetch answers 404 or 410 for it, or (without fetch) the next complete listing,
 *   started at once, lacks it too;
 * - an id the listing shows newer than delivered, or never delivered, as an upsert (its
 *   listed record, or fetched by id with reconcile.fetch);
 * - deletes above max_deletes of the known ids (an empty or cut listing) are held: none is
 *   delivered until a confirm or a second complete listing that finds the same ones.
 * What it holds in memory is a page (of the listing, or of what it found): the ids are in
 * the store. Without a listing source (null), the listings are a resume poller's full rounds
 * (source.resume.resync_deletes, engine/round-listing.ts): its turn delivers what they found.
 */
export class ListingReconciler implements Reconciler {
  constructor(
    private readonly listing: Source | null,
    private readonly fetchById: FetchById | null,
  ) {}

  async work(
    ctx: RunContext,
    epoch: number,
    budget: RunBudget,
    until: number,
  ): Promise<ReconcileStep> {
    const store = ctx.store.reconciliation;
    const rules = listingRules(ctx.config);
    if (store === undefined || rules === null) {
      return { kind: 'worked', delivered: 0, deadLettered: 0, more: false, error: null };
    }
    const source = { listing: this.listing, fetchById: this.fetchById };
    // A delete is confirmed by a fetch when there is a fetch to ask (reconcile.fetch).
    const fetches = this.fetchById !== null;
    return new Turn(ctx, epoch, budget, until, store, source, { ...rules, fetches }).run();
  }
}

/** One run's turn at the reconciliation. */
class Turn {
  private delivered = 0;
  private deadLettered = 0;
  private state: ReconcileState;

  constructor(
    private readonly ctx: RunContext,
    private readonly epoch: number,
    private readonly budget: RunBudget,
    private readonly until: number,
    private readonly store: ReconcileStore,
    source: { listing: Source | null; fetchById: FetchById | null },
    private readonly rules: ListingRules,
  ) {
    this.state = store.state();
    this.listing = source.listing;
    this.fetchById = source.fetchById;
  }

  private readonly listing: Source | null;
  private readonly fetchById: FetchById | null;

  async run(): Promise<ReconcileStep> {
    const { ctx, store } = this;
    const now = ctx.now();
    const every = this.rules.every;
    if (
      this.state.dueAt === null &&
      every !== null &&
      !this.save({ ...this.state, dueAt: now + every })
    ) {
      return { kind: 'fenced' };
    }
    // A confirm releases what is held: its deletes go out with the rest.
    if (this.state.held !== null && (store.confirmedAt() ?? 0) >= this.state.held.since) {
      const last =
        this.state.last === null ? null : { ...this.state.last, outcome: 'delivered' as const };
      const next = { ...this.state, held: null, last };
      if (!store.releaseHeld(this.epoch, next)) return { kind: 'fenced' };
      this.state = next;
    }
    if (this.state.retryAt !== null && this.state.retryAt > now) return this.worked(false);
    const sent = await this.deliverPending();
    if (sent !== 'done') return sent;
    // A listing that leaves deletes to confirm makes the next one due at once: it is listed
    // here too. What that one finds waits for the listing after it, at its time: the loop ends.
    for (;;) {
      const listed = await this.list();
      if (listed !== 'complete') return listed;
      const after = await this.deliverPending();
      if (after !== 'done') return after;
    }
  }

  /** Pages of the listing until it completes, the turn is over, or the budget is out. */
  private async list(): Promise<ReconcileStep | 'complete'> {
    const { ctx, store } = this;
    // Full rounds list (resync_deletes): the turn only delivers what they found.
    const source = this.listing;
    if (source === null) return this.worked(false);
    if (this.state.listing === null) {
      const requested = store.requestedAt();
      const due = this.state.dueAt !== null && this.state.dueAt <= ctx.now();
      if (requested === null && !due) return this.worked(false);
      const next = withNewListing(this.state, ctx.now());
      if (!store.startListing(this.epoch, next)) return { kind: 'fenced' };
      this.state = next;
    }
    for (;;) {
      const listing = this.state.listing;
      if (listing === null) return 'complete';
      if (this.yields()) return this.worked(false);
      if (this.budget.take(ctx.now())) return this.worked(true);
      const page = await source.fetchPage(everything(ctx.now()), listing.cursor);
      if (!ctx.store.holds(this.epoch)) return { kind: 'fenced' };
      const at = listing.pages + 1;
      if (!page.ok) {
        return this.failed(`listing page ${at}: ${page.error}`, page.kind, page.retryAfter);
      }
      const ids = await listedIds(ctx, page.updates);
      const next: ReconcileState = {
        ...this.state,
        listing: {
          ...listing,
          cursor: page.next,
          pages: at,
          ids: listing.ids + page.updates.length,
          unreadable: listing.unreadable + page.malformed.length,
        },
      };
      if (!store.addPage(this.epoch, ids, next)) return { kind: 'fenced' };
      this.state = next;
      if (page.next === null) {
        const done = this.complete();
        if (done !== null) return done;
        return 'complete';
      }
    }
  }

  /** The listing is complete: what it found becomes pending, or its deletes are held. */
  private complete(): ReconcileStep | null {
    const after = completeListing(this.ctx, this.epoch, this.store, this.rules);
    if (after === 'fenced') return { kind: 'fenced' };
    if (after !== null) this.state = after;
    return null;
  }

  /** Delivers what completed listings found, a page at a time: upserts, then deletes. */
  private async deliverPending(): Promise<ReconcileStep | 'done'> {
    const { ctx, store } = this;
    const upsertCtx: RunContext = { ...ctx, stream: 'listing' };
    const deleteCtx: RunContext = { ...ctx, stream: 'deletions', isDeleted: null };
    for (;;) {
      const pending = store.pending(PENDING_PER_STEP);
      if (pending.length === 0) return 'done';
      if (this.yields()) return this.worked(false);
      const contexts = { upsert: upsertCtx, delete: deleteCtx };
      const sorted = await sortPending(ctx, contexts, pending, this.fetchById, this.budget);
      if (sorted === 'budget') return this.worked(true);
      if ('error' in sorted) return this.failed(sorted.error, 'transient');
      const { skipped, deletes, upserts } = sorted;
      // What needs no delivery any more leaves no failure behind either.
      for (const { key } of skipped) {
        if (!ctx.store.clearFailure(this.epoch, key)) return { kind: 'fenced' };
      }
      if (skipped.length > 0 && !store.settle(this.epoch, skipped)) return { kind: 'fenced' };
      for (const [group, gctx] of [
        [upserts, upsertCtx],
        [deletes, deleteCtx],
      ] as const) {
        if (group.length === 0) continue;
        const sent = await this.deliver(gctx, group);
        if (sent !== 'done') return sent;
      }
    }
  }

  /** Delivers one group through the usual path: batches, attempts, dead letters (R8). */
  private async deliver(gctx: RunContext, updates: Update[]): Promise<ReconcileStep | 'done'> {
    const { store, epoch } = this;
    const all = gctx.store.failing();
    const failing = ownFailures(gctx, all);
    const plan = planDelivery(gctx, updates);
    // A delete or a listed upsert waits for a failing update of its id that the main stream
    // stored (R15, R19): that update's retry would undo it. A delete is versioned by the
    // version last delivered, but happened after every version shown: it waits for any.
    const main = mainFailures(all);
    const older = olderFailing(
      failing,
      gctx.stream === 'deletions'
        ? main.map((failure) => ({ ...failure, versionMs: Number.NEGATIVE_INFINITY }))
        : main,
    );
    const outcome = await deliverPage(gctx, epoch, plan, failing, older, this.budget);
    if (outcome.fenced) return { kind: 'fenced' };
    if (!(await rememberDelivered(gctx, epoch, outcome.delivered, new Map())))
      return { kind: 'fenced' };
    this.delivered += outcome.delivered.length;
    this.deadLettered += outcome.deadLettered;
    const handled = new Set(outcome.handled.map((entry) => entry.key));
    const op: DeliveryOp = gctx.stream === 'deletions' ? 'delete' : 'upsert';
    const done = updates
      .filter((update) => handled.has(ledgerKey(update.id, update.version)))
      .map((update) => ({ id: update.id, op }));
    if (done.length > 0 && !store.settle(epoch, done)) return { kind: 'fenced' };
    if (outcome.misconfigured)
      return this.failed(`delivery: ${outcome.misconfigured}`, 'misconfigured');
    if (outcome.retryable.length > 0) {
      return this.failed(`delivery: ${outcome.retryable.slice(0, 3).join('; ')}`, 'transient');
    }
    if (outcome.stop) return this.worked(true);
    return 'done';
  }

  /** The turn gives the lease back to the incremental polls: their tick, or a nudge, is due. */
  private yields(): boolean {
    const now = this.ctx.now();
    return now >= this.until || (this.ctx.freshness?.nudges().pending ?? false);
  }

  private failed(
    message: string,
    kind: 'transient' | 'rate_limited' | 'misconfigured' | 'bad_response',
    notBefore?: number,
  ): ReconcileStep {
    const { ctx } = this;
    const now = ctx.now();
    const failures = this.state.failures + 1;
    const failure = kind === 'bad_response' ? 'transient' : kind;
    const error = { at: now, message: ctx.redact ? ctx.redact(message) : message };
    // A listing that keeps failing on its page may hold a cursor the upstream let expire:
    // after LISTING_RESTART_AFTER failures in a row, the next listing starts over.
    // A full round's listing (no listing source) is the round's: it goes on from its cursor.
    const restart =
      this.listing !== null &&
      this.state.listing !== null &&
      failures % LISTING_RESTART_AFTER === 0;
    const next = {
      ...this.state,
      // A confirming listing started over still confirms (it is not due again at once after).
      ...(restart
        ? { listing: null, dueAt: now, confirming: this.state.listing?.confirms === true }
        : {}),
      failures,
      error,
      retryAt: retryAt(now, failures, failure, ctx.random, notBefore),
    };
    if (!this.save(next)) return { kind: 'fenced' };
    return {
      kind: 'worked',
      delivered: this.delivered,
      deadLettered: this.deadLettered,
      more: false,
      error: error.message,
    };
  }

  private worked(more: boolean): ReconcileStep {
    return {
      kind: 'worked',
      delivered: this.delivered,
      deadLettered: this.deadLettered,
      more,
      error: null,
    };
  }

  private save(next: ReconcileState): boolean {
    if (!this.store.save(this.epoch, next)) return false;
    this.state = next;
    return true;
  }
}
