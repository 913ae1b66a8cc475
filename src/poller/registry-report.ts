import type { FreshnessStore } from '../engine/ports.ts';
import { REPORT_EVERY_MS } from '../registry/heartbeat.ts';
import { type PollerSummary, registryOf } from '../registry/registry.ts';
import { authView } from './auth-view.ts';
import { dueAt } from './due-at.ts';
import { assessHealth, faultReason } from './status.ts';
import { listingInput } from './status-of.ts';
import type { SqliteStore } from './store/index.ts';
import type { Wiring } from './wiring.ts';

/**
 * Tells the registry what lists show of this poller, and when it should hear from it again
 * (its due time, see dueAt): at once when its state, dead letters or health changed, and
 * otherwise once REPORT_EVERY has passed since the last report, whatever moved (a heartbeat:
 * a poller whose checkpoint stands still, a failing one, renews its due time too). That is at
 * most 24 reports a day for a steady poller, whatever its schedule (fewer if it runs less
 * often). A poller the registry does not list reports nothing.
 */
export async function reportToRegistry(
  env: Env,
  name: string,
  store: SqliteStore,
  wiring: Wiring,
  freshness: FreshnessStore,
  now: number,
): Promise<void> {
  const state = store.read();
  const context = wiring.ok ? wiring.context : undefined;
  const deadLetters = store.deadLetters.summary();
  const health = assessHealth({
    name,
    configErrors: wiring.ok ? [] : wiring.errors,
    config: context?.config,
    state,
    lastRun: store.history.runs(1)[0],
    deadLetters,
    retrying: store.retrying(),
    firstSeenAt: store.presence.firstSeenAt(),
    now,
    freshness: { lateness: freshness.lateness(now), nudges: freshness.nudges() },
    reconcile: listingInput(store, context?.config),
    auth: authView(context?.config, store.oauth, now),
    nextPaths: store.nextPaths.all(),
  });
  const summary: PollerSummary = {
    state: health.state,
    checkpoint: state.checkpoint,
    deadLetters: deadLetters.count,
    atFault: health.alerts.length > 0,
    // Sent with the rest, not a reason to report: an alert's text changes with every tick.
    reason: faultReason(health.alerts),
    // Sent with the rest, not a reason to report: it moves with every run, and the heartbeat
    // renews it in time. A poller that cannot be wired runs nothing: never overdue.
    dueAt: context
      ? dueAt(state, { enabled: context.config.enabled, schedule: context.schedule }, now)
      : null,
  };
  const last = store.presence.lastReport();
  const changed =
    last === null ||
    last.state !== summary.state ||
    last.deadLetters !== summary.deadLetters ||
    last.atFault !== summary.atFault;
  // A due time sent is never less than REPORT_EVERY after its report: a poller the registry
  // holds as overdue has always passed its heartbeat, so a watchdog visit renews it.
  const heartbeat = last !== null && now - last.at >= REPORT_EVERY_MS;
  if (!changed && !heartbeat) return;
  try {
    await registryOf(env).report(name, summary, now);
    store.presence.setLastReport({ ...summary, at: now });
  } catch (error) {
    // The next run reports again: a list a few minutes stale is better than a failed run.
    console.log(
      JSON.stringify({ event: 'registry_report_failed', poller: name, error: String(error) }),
    );
  }
}
