import type { ReconcileConfig } from '../config/schema.ts';
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
  /** Deletes found (ids it lacks), and of them those already held. */
  deletes: number;
  alsoHeld: number;
  /** Ids known and not deleted. */
  known: number;
  /** What was held before this listing completed. */
  held: ReconcileState['held'];
}

/** What becomes of a completed listing's deletes (R16). */
export interface DeleteDecision {
  /** Release the held deletes this listing finds again. */
  agree: boolean;
  /** Hold this listing's other deletes. */
  hold: boolean;
  /** Its other deletes: those it found besides the ones it agreed on. */
  fresh: number;
  outcome: 'held' | 'agreed' | 'delivered';
  /** Why they are held, for status and the alert. */
  reason: string;
}

/**
 * R16: a listing's deletes go out when they are few (at most `max_deletes` of the known ids)
 * or when two complete listings found them; they are held when they are many, when the
 * listing had records it could not read, or when it was empty. Held deletes a later listing
 * finds again were found by two: they go out. Never on an empty listing's word, this one's or
 * the held one's (an empty listing would agree with any other that is cut short): what it
 * found waits for a confirm.
 */
export function decideDeletes(listing: CompletedListing, config: ReconcileConfig): DeleteDecision {
  const { ids, unreadable, deletes, alsoHeld, known, held } = listing;
  const limit =
    config.max_deletes.percent !== undefined
      ? Math.floor((known * config.max_deletes.percent) / 100)
      : config.max_deletes.count;
  const agree = ids > 0 && held !== null && !held.empty;
  const agreed = agree ? alsoHeld : 0;
  const fresh = deletes - agreed;
  const reason =
    ids === 0
      ? `the listing was empty: ${fresh} deletes of ${known} known ids`
      : unreadable > 0
        ? `the listing had ${unreadable} record(s) without a readable id`
        : `${fresh} deletes of ${known} known ids exceed max_deletes (${limit})`;
  const hold = fresh > 0 && (fresh > limit || unreadable > 0 || ids === 0);
  const outcome = hold ? 'held' : agreed > 0 ? 'agreed' : 'delivered';
  return { agree, hold, fresh, outcome, reason };
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
