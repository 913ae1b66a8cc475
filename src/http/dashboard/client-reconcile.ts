/**
 * The dashboard script's reconciliation buttons (Reconcile now, Confirm deletes), spliced
 * into the one script (client.ts), whose call, refused, say, why, count and pollerPath they use.
 */
export const RECONCILE_ACTIONS = `/** Why a manual trigger started no run now (the reconcile routes trigger one), or null. */
const skipWords = {
  lease_held: 'a run is going on: it or the next tick takes it up',
  paused: 'the poller is paused: resume it',
  backing_off: 'it is backing off after failed runs',
  disabled: 'it is disabled in its config',
};
const notNow = (trigger) =>
  trigger && trigger.outcome === 'skipped' ? skipWords[trigger.reason] || trigger.reason : null;
async function reconcile(name) {
  const result = await call('POST', pollerPath(name) + '/reconcile');
  const no = refused(result);
  if (no) return say(no, 'error');
  if (!result.ok) return say('Could not start a listing of ' + name + ': ' + why(result.data, result.status), 'error');
  if (result.data.listing_in_progress) return say(name + ': a listing is going on; a new one starts when it completes', 'ok');
  const later = notNow(result.data.trigger);
  if (later) return say('Listing of ' + name + ' requested: the next run starts it (' + later + ')', 'warn');
  say('Listing of ' + name + ' requested: it starts now', 'ok');
}
async function confirmDeletes(name) {
  const result = await call('POST', pollerPath(name) + '/reconcile/confirm');
  const no = refused(result);
  if (no) return say(no, 'error');
  if (result.status === 409 && result.data.outcome !== 'misconfigured') return say('No deletes of ' + name + ' are held any more: nothing to confirm', 'warn');
  if (!result.ok) return say('Could not confirm the deletes of ' + name + ': ' + why(result.data, result.status), 'error');
  const done = 'Confirmed ' + count(result.data.deletes, 'held delete') + ' of ' + name + ': ';
  const later = notNow(result.data.trigger);
  if (later) return say(done + 'the next run delivers them (' + later + ')', 'warn');
  say(done + 'they are being delivered', 'ok');
}
`;
