import { listingRules } from '../engine/listing-complete.ts';
import type { PollerEngine } from '../engine/poller.ts';
import type { RunContext } from '../engine/ports.ts';
import { audit } from './admin.ts';
import type { ReconcileReply } from './rpc.ts';
import type { SqliteStore } from './store/index.ts';

/**
 * An admin's word to the reconciliation: `start` a listing now (POST
 * /pollers/:name/reconcile), or `confirm` the deletes it holds (POST .../reconcile/confirm).
 * Either is kept beside the reconciliation's state (a run going on does not overwrite it)
 * and acted on by a run, triggered here as a manual one (skipped if a run is going: that run,
 * or the next tick, takes it up).
 */
export async function reconcileAdmin(
  store: SqliteStore,
  name: string,
  wired: { context: RunContext; engine: PollerEngine },
  action: 'start' | 'confirm',
  now: number,
): Promise<ReconcileReply> {
  const config = wired.context.config;
  // source.resume.resync_deletes holds deletes as reconcile does: a confirm releases them, and
  // its listings are full rounds (a resync, asked for with PUT /pollers/:name/checkpoint).
  const rounds = config.reconcile === undefined && listingRules(config) !== null;
  if (config.reconcile === undefined && !(rounds && action === 'confirm')) {
    return {
      outcome: 'refused',
      status: 404,
      error: rounds
        ? `poller "${name}" has no reconcile: its listings are full rounds of source.resume; PUT /pollers/${name}/checkpoint with {"resync": true} starts one`
        : `poller "${name}" has no reconcile in its config`,
    };
  }
  const reconciliation = store.reconciliation;
  const state = reconciliation.state();
  if (action === 'confirm') {
    if (state.held === null) {
      return { outcome: 'refused', status: 409, error: 'no deletes are held: nothing to confirm' };
    }
    reconciliation.confirm(now);
    audit(store, name, 'reconcile.confirmed', { deletes: state.held.deletes }, now);
    const trigger = await wired.engine.trigger('manual');
    return { outcome: 'confirmed', deletes: state.held.deletes, trigger };
  }
  reconciliation.request(now);
  audit(store, name, 'reconcile.requested', {}, now);
  const trigger = await wired.engine.trigger('manual');
  return { outcome: 'requested', listing_in_progress: state.listing !== null, trigger };
}
