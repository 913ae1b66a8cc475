import type { MaxDeletes } from '../config/max-deletes.ts';
import type { RunContext } from './ports.ts';
import type { ReconcileState, ReconcileStore } from './reconcile-ports.ts';
import { decideDeletes } from './reconcile-rules.ts';

/**
 * What completes a listing: a reconciliation's (reconcile, `every` apart) or a resume poller's
 * full round (source.resume.resync_deletes, `every` null: the next is the next full round).
 */
export interface ListingRules {
  every: number | null;
  max_deletes: MaxDeletes;
  /** Whether reconcile.fetch confirms each delete (a 404 or 410) before it goes out. */
  fetches: boolean;
}

/** The rules of a poller's complete listings: reconcile's, or resync_deletes' (null: none). */
export function listingRules(config: RunContext['config']): ListingRules | null {
  const { reconcile } = config;
  if (reconcile !== undefined) {
    const fetches = reconcile.fetch !== undefined;
    return { every: reconcile.every, max_deletes: reconcile.max_deletes, fetches };
  }
  const resume = config.source.resume;
  if (resume?.resync_deletes !== true) return null;
  // A full round's deletes are confirmed by the next full round: there is nothing to fetch.
  return { every: null, max_deletes: resume.max_deletes, fetches: false };
}

/**
 * A state whose listing starts now, from its first page: the one it was, less `confirming`,
 * which the new listing carries as `confirms` (it confirms what the listing before found).
 */
export function withNewListing(state: ReconcileState, now: number): ReconcileState {
  const { confirming, ...rest } = state;
  const listing = {
    startedAt: now,
    cursor: null,
    pages: 0,
    ids: 0,
    unreadable: 0,
    ...(confirming === true ? { confirms: true } : {}),
  };
  return { ...rest, listing };
}

/**
 * A listing completed (R16): what it found becomes pending, its deletes wait for the next
 * listing to confirm them (started at once: `confirming`), or are held (more than
 * max_deletes). Answers the state after it, or 'fenced'; null when no listing was going on.
 */
export function completeListing(
  ctx: RunContext,
  epoch: number,
  store: ReconcileStore,
  rules: ListingRules,
): ReconcileState | 'fenced' | null {
  const state = store.state();
  const listing = state.listing;
  if (listing === null) return null;
  const now = ctx.now();
  const before = listing.startedAt - ctx.config.lag_allowance;
  const { deletes, alsoHeld, alsoAwaiting } = store.countDeletes(before);
  const known = store.knownIds();
  const { ids, unreadable } = listing;
  const { fetches } = rules;
  const decision = decideDeletes(
    { ids, unreadable, deletes, alsoHeld, alsoAwaiting, known, held: state.held, fetches },
    rules,
  );
  const { agree, confirm, hold, awaits, fresh, outcome, reason } = decision;
  // Deletes to confirm by a second listing: it starts at once, unless this one was such a
  // listing (what it found waits for the next at its time, or listings would follow one
  // another for as long as the upstream deletes).
  const confirmNext = awaits && listing.confirms !== true;
  const next: ReconcileState = {
    ...state,
    listing: null,
    // Held or not, the next listing comes at its time (or when an admin asks for one): it
    // releases what it finds again of what is held, and drops the rest.
    dueAt: confirmNext ? now : rules.every === null ? null : listing.startedAt + rules.every,
    confirming: confirmNext,
    held: hold ? { deletes: fresh, known, since: now, reason, empty: listing.ids === 0 } : null,
    last: {
      startedAt: listing.startedAt,
      finishedAt: now,
      ids: listing.ids,
      deletes,
      upserts: 0, // counted by the store as it keeps them (completeListing)
      outcome,
      deletesBefore: fetches
        ? listing.startedAt
        : confirm && state.last !== null && state.last.ids > 0
          ? state.last.startedAt
          : null,
    },
    error: null,
    failures: 0,
    retryAt: null,
  };
  const found = { before, foundAt: listing.startedAt, agree, confirm, hold, await: awaits };
  if (!store.completeListing(epoch, found, next)) return 'fenced';
  const after = store.state();
  ctx.log?.({
    event: rules.every === null ? 'resume_full_round' : 'reconcile',
    poller: ctx.poller,
    ids: listing.ids,
    deletes,
    upserts: after.last?.upserts ?? 0,
    outcome,
    ...(hold ? { level: 'warn', warning: reason } : {}),
  });
  return after;
}
