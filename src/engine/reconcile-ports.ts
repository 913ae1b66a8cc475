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
    /** Started at once to confirm the deletes the listing before it found (R16). */
    confirms?: boolean;
  } | null;
  /**
   * The next listing confirms the deletes the last one found: it is due at once, and what it
   * finds itself waits for the listing after it, at its time (two listings per `every` at most).
   */
  confirming?: boolean;
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
  /**
   * The deletes it sends out (found again, or fetched) are of ids gone before this (our
   * clock): its own start with reconcile.fetch, the start of the listing before it without
   * (the first of the two that lacked them); null when it confirms none.
   */
  deletesBefore?: number | null;
  /**
   * Deletes delivered (or queued to be, each fetched first with reconcile.fetch), held, waiting
   * for the next listing to confirm them (unconfirmed), or delivered because a second listing
   * agreed.
   */
  outcome: 'delivered' | 'held' | 'agreed' | 'unconfirmed';
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
   * listing: its deletes. `alsoHeld` counts those of them already held, `alsoAwaiting` those
   * an earlier listing found and left to be confirmed.
   */
  countDeletes(before: number): { deletes: number; alsoHeld: number; alsoAwaiting: number };
  /** Held deletes waiting. */
  heldCount(): number;
  /** Ids known and not deleted. */
  knownIds(): number;
  /**
   * A listing completed (it began at `foundAt`): with `agree`, the held deletes it finds
   * again are released; with `confirm`, the deletes waiting for it that it finds again; the
   * other held and waiting ones are dropped. Its other deletes (held with `hold`, waiting for
   * the next listing with `await`) and its upserts become pending.
   */
  completeListing(epoch: number, found: FoundDeletes, state: ReconcileState): boolean;
  /** Releases the held deletes (a confirm), with the state that says so. */
  releaseHeld(epoch: number, state: ReconcileState): boolean;
  /** Up to `limit` changes waiting to be delivered, held ones not included. */
  pending(limit: number): PendingChange[];
  /** Pending changes handled (delivered, dead-lettered, or no longer needed). */
  settle(epoch: number, done: readonly { id: string; op: DeliveryOp }[]): boolean;
}

/** What a completed listing does with the deletes found before it and its own (R16). */
export interface FoundDeletes {
  /** Its deletes: ids last delivered before this (our clock). */
  before: number;
  /** When it began. */
  foundAt: number;
  /** Release the held deletes it finds again. */
  agree: boolean;
  /** Release the deletes waiting for a second listing that it finds again. */
  confirm: boolean;
  /** Hold its other deletes (more than max_deletes, or a suspicious listing). */
  hold: boolean;
  /** Its other deletes wait for the next listing to confirm them (no reconcile.fetch). */
  await: boolean;
}

/**
 * Fetches one record by id (reconcile.fetch); null when the upstream says it is gone.
 * `unaddressable`: the id cannot be put in the URL (it would change the path), so it is never
 * asked for, and nothing about it can be confirmed.
 */
export type FetchById = (
  id: string,
) => Promise<
  { ok: true; record: unknown | null } | { ok: false; error: string; unaddressable?: true }
>;
