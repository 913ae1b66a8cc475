import { pollerObject } from '../catalog.ts';

/** What /demo/audit reports: the proof that the demo poller lost nothing. */
export interface AuditReport {
  poller: string;
  /** The poller's scope starts here: updates before it were never its to deliver. */
  started_from: string | null;
  checkpoint: string | null;
  produced: number;
  produced_below_checkpoint: number;
  delivered: number;
  /** Updates stamped below the checkpoint that never reached D1. Must stay 0. */
  missing_below_checkpoint: number;
  missing_sample: { id: string; updated_at: string }[];
}

/**
 * Compares every update the demo upstream produced in the poller's scope (from where it
 * started up to its checkpoint) with the versions the demo handler wrote to D1: each must
 * have been delivered. Updates the upstream produced before the poller started (the audit,
 * or anything else, woke it first) are out of scope, not lost.
 */
export async function audit(env: Env, poller: string): Promise<AuditReport> {
  const upstream = env.DEMO_UPSTREAM.get(env.DEMO_UPSTREAM.idFromName('demo'));
  const status = await pollerObject(env, poller).status();
  const checkpoint = status.checkpoint === null ? 0 : Date.parse(status.checkpoint);
  const startedFrom = status.started_from === null ? 0 : Date.parse(status.started_from);
  const [produced, inScope, versions] = await Promise.all([
    upstream.count(),
    upstream.produced(checkpoint),
    env.DB.prepare('SELECT id, updated_at_ms FROM session_versions').all<{
      id: string;
      updated_at_ms: number;
    }>(),
  ]);
  const delivered = new Set(versions.results.map((row) => `${row.id}@${row.updated_at_ms}`));
  const below = inScope.filter((update) => update.updated_at_ms >= startedFrom);
  const missing = below.filter((update) => !delivered.has(`${update.id}@${update.updated_at_ms}`));
  return {
    poller,
    started_from: status.started_from,
    checkpoint: status.checkpoint,
    produced,
    produced_below_checkpoint: below.length,
    delivered: delivered.size,
    missing_below_checkpoint: missing.length,
    missing_sample: missing.slice(0, 10).map((update) => ({
      id: update.id,
      updated_at: new Date(update.updated_at_ms).toISOString(),
    })),
  };
}
