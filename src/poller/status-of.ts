import type { PollerConfig } from '../config/schema.ts';
import { listingRules } from '../engine/listing-complete.ts';
import type { FreshnessStore } from '../engine/ports.ts';
import { authView } from './auth-view.ts';
import type { OwnSecrets } from './own-secrets.ts';
import type { ReconcileInput } from './reconcile-view.ts';
import { buildStatus, type PollerStatus } from './status.ts';
import type { SqliteStore } from './store/index.ts';
import type { Wiring } from './wiring.ts';

/** A poller's status, read from its object's storage (GET /status/:poller). */
export async function statusOf(
  name: string,
  wiring: Wiring,
  store: SqliteStore,
  freshness: FreshnessStore,
  secrets: OwnSecrets,
  alarm: number | null,
): Promise<PollerStatus> {
  const config = wiring.ok ? wiring.context.config : undefined;
  const now = Date.now();
  return buildStatus({
    name,
    configErrors: wiring.ok ? [] : wiring.errors,
    config,
    state: store.read(),
    lastRun: store.history.runs(1)[0],
    alarm,
    counters: store.counters(),
    deadLetters: store.deadLetters.summary(),
    retrying: store.retrying(),
    audit: store.audit.list(20),
    firstSeenAt: store.presence.firstSeenAt(),
    tables: store.tableSizes(),
    databaseBytes: store.databaseBytes(),
    now,
    freshness: { lateness: freshness.lateness(now), nudges: freshness.nudges() },
    reconcile: listingInput(store, config),
    auth: authView(config, store.oauth, now),
    nextPaths: store.nextPaths.all(),
    resume: config?.source.resume ? store.rounds.read() : null,
    ...(config?.source.children ? { children: store.childProgress.read() } : {}),
    // After the wiring, whose read of the secrets moves them during a rotation.
    secretKeys: await secrets.keyCounts(),
  });
}

/** What status shows of a poller's listings: reconcile's, or its full rounds' (resync_deletes). */
export function listingInput(
  store: SqliteStore,
  config: PollerConfig | undefined,
): ReconcileInput | null {
  const rules = config === undefined ? null : listingRules(config);
  return rules === null ? null : store.reconciliation.input(rules.every);
}
