import type { FreshnessStore } from '../engine/ports.ts';
import { registryOf } from '../registry/registry.ts';
import { REPORT_EVERY_MS } from '../registry/reported-lag.ts';
import { authView } from './auth-view.ts';
import { assessHealth, faultReason } from './status.ts';
import type { SqliteStore } from './store/index.ts';
import type { Wiring } from './wiring.ts';

/**
 * Tells the registry what lists show of this poller, when it changed (its state or dead
 * letters), or its checkpoint moved and REPORT_EVERY has passed: a few writes a day for a
 * steady poller, whatever its schedule. A poller the registry does not list reports nothing.
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
  const deadLetters = store.deadLetters.summary();
  const reconcile = wiring.ok ? wiring.context.config.reconcile : undefined;
  const health = assessHealth({
    name,
    configErrors: wiring.ok ? [] : wiring.errors,
    config: wiring.ok ? wiring.context.config : undefined,
    state,
    lastRun: store.history.runs(1)[0],
    deadLetters,
    firstSeenAt: store.presence.firstSeenAt(),
    now,
    freshness: { lateness: freshness.lateness(now), nudges: freshness.nudges() },
    reconcile: reconcile ? store.reconciliation.input(reconcile.every) : null,
    auth: authView(wiring.ok ? wiring.context.config : undefined, store.oauth, now),
  });
  const summary = {
    state: health.state,
    checkpoint: state.checkpoint,
    deadLetters: deadLetters.count,
    atFault: health.alerts.length > 0,
    // Sent with the rest, not a reason to report: an alert's text changes with every tick.
    reason: faultReason(health.alerts),
  };
  const last = store.presence.lastReport();
  const changed =
    last === null ||
    last.state !== summary.state ||
    last.deadLetters !== summary.deadLetters ||
    last.atFault !== summary.atFault ||
    (last.checkpoint !== summary.checkpoint && now - last.at >= REPORT_EVERY_MS);
  if (!changed) return;
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
