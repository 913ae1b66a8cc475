import type { MaxDeletes } from '../config/max-deletes.ts';
import type { RememberedId, RunContext } from './ports.ts';
import type { PendingChange, ReconcileState } from './reconcile-ports.ts';
import { ignoredPaths } from './remembered-ids.ts';
import { contentHash } from './unchanged.ts';

/** A poller's reconciliation before its first run with `reconcile`. */
export const NO_RECONCILIATION: ReconcileState = {
  dueAt: null,
  listing: null,
  held: null,
  last: null,
  error: null,
  failures: 0,
  retryAt: null,
};

/** What a completed listing found, counted by the store, with the listing itself. */
export interface CompletedListing {
  /** Ids of pages read, and those without a readable id. */
  ids: number;
  unreadable: number;
  /** Deletes found (ids it lacks), and of them those already held, or waiting for it. */
  deletes: number;
  alsoHeld: number;
  alsoAwaiting: number;
  /** Ids known and not deleted. */
  known: number;
  /** What was held before this listing completed. */
  held: ReconcileState['held'];
  /** Whether reconcile.fetch confirms each delete (a 404 or 410) before it goes out. */
  fetches: boolean;
}

/** What becomes of a completed listing's deletes (R16). */
export interface DeleteDecision {
  /** Release the held deletes this listing finds again. */
  agree: boolean;
  /** Release the deletes waiting for a second listing that this one finds again. */
  confirm: boolean;
  /** Hold this listing's other deletes. */
  hold: boolean;
  /** Its other deletes wait for the next listing to confirm them. */
  awaits: boolean;
  /** Its other deletes: those it found besides the ones it agreed on. */
  fresh: number;
  outcome: 'held' | 'agreed' | 'delivered' | 'unconfirmed';
  /** Why they are held, for status and the alert. */
  reason: string;
}

/**
 * R16: no delete goes out on one listing's word. A listing paged by offset skips a record
 * when one before it goes away while it is read, and a skipped id looks deleted, however few.
 * So each delete is confirmed: by reconcile.fetch answering 404 or 410 for its id (on its way
 * out), or, without fetch, by the next complete listing lacking it too (`awaits`: a listing
 * it is due at once). A delete a later listing shows again is dropped.
 * On top of that, a listing's deletes are held when they are many (more than `max_deletes` of
 * the known ids), when the listing had records it could not read, or when it was empty: held
 * deletes go out only on a confirm or when the next listing finds them again. Never on an
 * empty listing's word, this one's or the held one's (an empty listing would agree with any
 * other that is cut short): what it found waits for a confirm. A listing with records it
 * could not read confirms nothing (the id it lacks may be one of them).
 */
export function decideDeletes(
  listing: CompletedListing,
  config: { max_deletes: MaxDeletes },
): DeleteDecision {
  const { ids, unreadable, deletes, alsoHeld, alsoAwaiting, known, held, fetches } = listing;
  const limit =
    config.max_deletes.percent !== undefined
      ? Math.floor((known * config.max_deletes.percent) / 100)
      : config.max_deletes.count;
  const trusted = ids > 0 && unreadable === 0;
  const agree = trusted && held !== null && !held.empty;
  const confirm = trusted;
  const agreed = (agree ? alsoHeld : 0) + (confirm ? alsoAwaiting : 0);
  const fresh = deletes - agreed;
  const reason =
    ids === 0
      ? `the listing was empty: ${fresh} deletes of ${known} known ids`
      : unreadable > 0
        ? `the listing had ${unreadable} record(s) without a readable id`
        : `${fresh} deletes of ${known} known ids exceed max_deletes (${limit})`;
  const hold = fresh > 0 && (fresh > limit || unreadable > 0 || ids === 0);
  const awaits = fresh > 0 && !hold && !fetches;
  const outcome = hold ? 'held' : agreed > 0 ? 'agreed' : awaits ? 'unconfirmed' : 'delivered';
  return { agree, confirm, hold, awaits, fresh, outcome, reason };
}

/**
 * Whether what a listing found was overtaken since: a delete whose id was delivered again
 * after the listing began (it is back, or was never gone); an upsert the stream delivered
 * meanwhile (that version or a newer one; compared by content, the same content).
 */
export async function overtaken(
  change: PendingChange,
  last: RememberedId | undefined,
  ctx: RunContext,
): Promise<boolean> {
  if (change.op === 'delete') {
    return last !== undefined && (last.deleted || last.seenAt >= change.foundAt);
  }
  // A tombstone the listing shows, of an id delivered as deleted since (or never known).
  if (ctx.isDeleted?.(change.record)) return last === undefined || last.deleted;
  if (last === undefined || last.deleted) return false;
  const versioned = change.version !== '';
  if (ctx.config.reconcile?.compare === 'content' && last.hash !== null) {
    if (versioned && last.versionMs > change.versionMs) return true;
    return (await contentHash(change.record, ignoredPaths(ctx))) === last.hash;
  }
  return !versioned || last.versionMs >= change.versionMs;
}
