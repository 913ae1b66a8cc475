import { completeListing, listingRules, withNewListing } from './listing-complete.ts';
import type { Page } from './page-stream.ts';
import type { ListedId, RunContext } from './ports.ts';

/**
 * source.resume.resync_deletes: a full round (from source.url: the first, a resync, or the
 * round that confirms one) is a complete listing, kept in the reconciliation's tables as a
 * reconcile listing is (engine/listing-complete.ts decides its deletes, engine/reconcile.ts
 * delivers them). Null for a poller without it.
 */
export interface RoundListing {
  /**
   * A page of the full round, handled (`page`: its number in the round, from 1): its ids join
   * the listing, which its first page starts and its last (`last`) completes. Answers whether
   * a second full round is due at once (it confirms this one's deletes), or 'fenced'.
   */
  listed(page: Page, number: number, last: boolean): boolean | 'fenced';
  /** Whether the next round lists in full although a token is stored: it confirms deletes. */
  confirming(): boolean;
}

/** The listing of a poller's full rounds, or null without resync_deletes. */
export function roundListing(ctx: RunContext, epoch: number): RoundListing | null {
  const store = ctx.store.reconciliation;
  const rules = listingRules(ctx.config);
  if (store === undefined || rules === null || ctx.config.reconcile !== undefined) return null;
  return {
    confirming() {
      const state = store.state();
      return state.confirming === true || state.listing?.confirms === true;
    },
    listed(page, number, last) {
      let state = store.state();
      if (number === 1) {
        state = withNewListing(state, ctx.now());
        if (!store.startListing(epoch, state)) return 'fenced';
      }
      const listing = state.listing;
      // A round whose listing did not start with it (resync_deletes set meanwhile), or one
      // completed already (a crash after it, before the commit): it lists nothing.
      if (listing === null) return false;
      // The round delivers its records itself: the listing keeps their ids only.
      const ids: ListedId[] = page.updates.map((update) => ({
        id: update.id,
        version: update.version,
        versionMs: update.versionMs,
        record: null,
      }));
      const next = {
        ...state,
        listing: {
          ...listing,
          pages: number,
          ids: listing.ids + ids.length,
          unreadable: listing.unreadable + page.malformed.length,
        },
      };
      if (!store.addPage(epoch, ids, next)) return 'fenced';
      if (!last) return false;
      const after = completeListing(ctx, epoch, store, rules);
      if (after === 'fenced') return 'fenced';
      return after?.confirming === true;
    },
  };
}
