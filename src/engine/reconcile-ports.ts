import type { RunBudget } from './budget.ts';
import type { DeliveryOp, RunContext } from './ports.ts';

/**
 * The reconciliation's ports (reconcile, engine/reconcile.ts): what a run asks of it, where
 * it is, and its storage. Re-exported by ports.ts with the engine's other ports.
 */

/** What a run asks of the reconciliation (engine/reconcile.ts), once its streams are caught up. */
export interface Reconciler {
  /** Works on the listing (and delivers what a complete one found) until `until` or the budget. */
  work(ctx: RunContext, epoch: number, budget: RunBudget, until: number): Promise<ReconcileStep>;
}

/**
 * How a run's turn at the reconciliation ended: what it delivered, whether it stopped for the
 * run's budget with more to do (`more`), and the error it met (kept in its own state and
 * retried with its own backoff: it never fails the run).
 */
export type ReconcileStep =
  | { kind: 'worked'; delivered: number; deadLettered: number; more: boolean; error: string | null }
  | { kind: 'fenced' };

/** Where a reconciliation is (reconcile): kept in one row, read and written by the engine. */
export interface ReconcileState {
  /** When the next listing starts (null until the first run with `reconcile` books it). */
  dueAt: number | null;
  /** The listing going on, if any: it resumes from `cursor` in the next run. */
  listing: {
    startedAt: number;
    cursor: string | null;
    pages: number;
    ids: number;
    /** Records the listing could not read (no id): deletes are held while any. */
    unreadable: number;
  } | null;
  /** Deletes found but held: more than max_deletes, awaiting a confirm or a listing that agrees. */
  held: {
    deletes: number;
    known: number;
    since: number;
    reason: string;
    /** Found by an empty listing: no later listing agrees with it, only a confirm. */
    empty?: boolean;
  } | null;
  /** The last listing that completed. */
  last: ListingSummary | null;
  /** The last error of a listing page or of a delivery, and the backoff after it. */
  error: { at: number; message: string } | null;
  failures: number;
  retryAt: number | null;
}

/** What a completed listing found, for status. */
export interface ListingSummary {
  startedAt: number;
  finishedAt: number;
  ids: number;
  deletes: number;
  upserts: number;
  /** Deletes delivered (or queued to be), held, or delivered because a second listing agreed. */
  outcome: 'delivered' | 'held' | 'agreed';
}

/** An id a listing showed: its record kept only when it is an upsert to deliver. */
export interface ListedId {
  id: string;
  version: string;
  versionMs: number;
  /** The record, when the listing showed what tidemark never delivered; else null. */
  record: unknown;
}

/**
 * A delete or an upsert a completed listing found, waiting to be delivered. A delete's
 * version is its id's last delivered one (as an ISO time): a receiver that keeps the newest
 * version takes it, and takes the record back if a later listing shows it again.
 */
export interface PendingChange {
  id: string;
  op: DeliveryOp;
  version: string;
  versionMs: number;
  record: unknown;
  /** When the listing that found it began (our clock). */
  foundAt: number;
}

/**
 * A reconciliation's storage (engine/reconcile.ts): its state, the ids of the listing going
 * on, and what completed listings found to deliver. Writes that a run makes are fenced by the
 * lease (R6); a request or a confirm (admin) is not, and is kept apart from the state so a
 * run's write never overwrites it.
 */
export interface ReconcileStore {
  state(): ReconcileState;
  save(epoch: number, state: ReconcileState): boolean;
  /** When an admin asked for a listing now, or null. */
  requestedAt(): number | null;
  /** When an admin confirmed the held deletes, or null. */
  confirmedAt(): number | null;
  request(at: number): void;
  confirm(at: number): void;
  /** A listing starts: the last one's ids are forgotten, and the request is taken. */
  startListing(epoch: number, state: ReconcileState): boolean;
  /** One page of a listing, with the state that says where the next one is. */
  addPage(epoch: number, ids: readonly ListedId[], state: ReconcileState): boolean;
  /**
   * Ids delivered, not deleted, delivered before `before` (our clock), and absent from the
   * listing: its deletes. `held` counts those of them already held.
   */
  countDeletes(before: number): { deletes: number; alsoHeld: number };
  /** Held deletes waiting. */
  heldCount(): number;
  /** Ids known and not deleted. */
  knownIds(): number;
  /**
   * A listing completed (it began at `foundAt`): with `agree`, the held deletes it finds
   * again are released, and the other held ones dropped; its other deletes (held with
   * `hold`) and its upserts become pending.
   */
  completeListing(
    epoch: number,
    found: { before: number; foundAt: number; hold: boolean; agree: boolean },
    state: ReconcileState,
  ): boolean;
  /** Releases the held deletes (a confirm), with the state that says so. */
  releaseHeld(epoch: number, state: ReconcileState): boolean;
  /** Up to `limit` changes waiting to be delivered, held ones not included. */
  pending(limit: number): PendingChange[];
  /** Pending changes handled (delivered, dead-lettered, or no longer needed). */
  settle(epoch: number, done: readonly { id: string; op: DeliveryOp }[]): boolean;
}

/** Fetches one record by id (reconcile.fetch); null when the upstream says it is gone. */
export type FetchById = (
  id: string,
) => Promise<{ ok: true; record: unknown | null } | { ok: false; error: string }>;
