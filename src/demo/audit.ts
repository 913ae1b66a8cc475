/** What /demo/audit reports: the proof that the demo poller lost nothing. */
export interface AuditReport {
  poller: string;
  checkpoint: string | null;
  produced: number;
  produced_below_checkpoint: number;
  delivered: number;
  /** Updates stamped below the checkpoint that never reached D1. Must stay 0. */
  missing_below_checkpoint: number;
  missing_sample: { id: string; updated_at: string }[];
}

/**
 * Compares every update the demo upstream ever produced with the versions the demo handler
 * wrote to D1. Below the checkpoint, every produced update must have been delivered.
 */
export async function audit(env: Env, poller: string): Promise<AuditReport> {
  const upstream = env.DEMO_UPSTREAM.get(env.DEMO_UPSTREAM.idFromName('demo'));
  const status = await env.POLLER.get(env.POLLER.idFromName(poller)).status(poller);
  const checkpoint =
    status.checkpoint === null ? Number.NEGATIVE_INFINITY : Date.parse(status.checkpoint);
  const [produced, below, versions] = await Promise.all([
    upstream.count(),
    upstream.produced(Number.isFinite(checkpoint) ? checkpoint : 0),
    env.DB.prepare('SELECT id, updated_at_ms FROM session_versions').all<{
      id: string;
      updated_at_ms: number;
    }>(),
  ]);
  const delivered = new Set(versions.results.map((row) => `${row.id}@${row.updated_at_ms}`));
  const missing = below.filter((update) => !delivered.has(`${update.id}@${update.updated_at_ms}`));
  return {
    poller,
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
