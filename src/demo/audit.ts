import { pollerObject, pollerSettings } from '../catalog.ts';
import {
  compareMirror,
  type MirrorReport,
  type MirrorRow,
  type RunLine,
  retryingOf,
} from './audit-mirror.ts';

export type { MirrorReport } from './audit-mirror.ts';

/** What /demo/audit reports: the proof that the demo poller lost nothing. */
export interface AuditReport {
  poller: string;
  /** The poller's scope starts here: updates before it were never its to deliver. */
  started_from: string | null;
  checkpoint: string | null;
  produced: number;
  produced_below_checkpoint: number;
  delivered: number;
  /**
   * Updates stamped below the checkpoint that never reached D1 and are not retrying either.
   * Must stay 0.
   */
  missing_below_checkpoint: number;
  missing_sample: { id: string; updated_at: string }[];
  /**
   * Updates stamped below the checkpoint that have not reached D1 yet and are stored as
   * failing with their records, retried by every run (R19): in flight, not lost.
   */
  retrying_below_checkpoint: number;
  /** Deletes received by the demo handler (each id and version once). */
  deletes_delivered: number;
  deletes: DeletesReport;
  /** The D1 `sessions` table against the upstream's sessions. */
  mirror: MirrorReport;
}

export interface DeletesReport {
  /** Sessions the upstream deleted and logged in its deletions endpoint. */
  recorded: number;
  /** Sessions the upstream deleted without a trace: only a reconciliation finds them. */
  hard: number;
  /** Deletes received from the deletions stream (versioned by the logged deleted_at). */
  from_deletions_stream: number;
  /** Deletes received from a reconciliation (versioned by its listing's start). */
  from_reconcile: number;
}

/**
 * Compares every update the demo upstream produced in the poller's scope (from where it
 * started up to its checkpoint) with the versions the demo handler wrote to D1: each must
 * have been delivered. Updates the upstream produced before the poller started (the audit,
 * or anything else, woke it first) are out of scope, not lost. Then compares the mirror
 * (the D1 `sessions` table) with the upstream's sessions (see MirrorReport).
 */
export async function audit(env: Env, poller: string): Promise<AuditReport> {
  const upstream = env.DEMO_UPSTREAM.get(env.DEMO_UPSTREAM.idFromName('demo'));
  const object = pollerObject(env, poller);
  // The poller first, then the upstream, then D1: what the poller guarantees is then
  // guaranteed for what the audit reads after it.
  const [status, runs, settings, failing] = await Promise.all([
    object.status(),
    object.runs(100),
    pollerSettings(env, poller),
    object.retryingUpdates(),
  ]);
  const retrying = retryingOf(failing);
  const checkpoint = status.checkpoint === null ? 0 : Date.parse(status.checkpoint);
  const startedFrom = status.started_from === null ? 0 : Date.parse(status.started_from);
  const [produced, inScope, facts, deletes] = await Promise.all([
    upstream.count(),
    upstream.produced(checkpoint),
    upstream.mirrorFacts({
      from: status.started_from === null ? Number.MAX_SAFE_INTEGER : startedFrom,
      below: checkpoint,
    }),
    upstream.deletes(),
  ]);
  const [versions, mirror, received] = await Promise.all([
    env.DB.prepare('SELECT id, updated_at_ms FROM session_versions').all<{
      id: string;
      updated_at_ms: number;
    }>(),
    env.DB.prepare(
      'SELECT id, updated_at_ms, deleted, upserted_at_ms FROM sessions',
    ).all<MirrorRow>(),
    env.DB.prepare('SELECT id, deleted_at_ms FROM session_deletes').all<{
      id: string;
      deleted_at_ms: number;
    }>(),
  ]);
  const delivered = new Set(versions.results.map((row) => `${row.id}@${row.updated_at_ms}`));
  const below = inScope.filter((update) => update.updated_at_ms >= startedFrom);
  const undelivered = below.filter(
    (update) => !delivered.has(`${update.id}@${update.updated_at_ms}`),
  );
  // Stored as failing and retried by every run (R19): not delivered yet, not lost either.
  const missing = undelivered.filter(
    (update) => !retrying.upserts.has(`${update.id}@${update.updated_at_ms}`),
  );

  const config = settings.ok ? settings.config : null;
  const lag = config?.lag_allowance ?? 0;
  const lines = runs as RunLine[];
  // A successful run polled the deletions stream up to its start − lag_allowance, at least;
  // the stream covers the log from where it began (a run from before it covers nothing).
  const lastSuccess = lines.find((run) => run.outcome === 'success');
  const through = lastSuccess === undefined ? null : lastSuccess.startedAt - lag;
  const deletionsThrough =
    config?.source.deletions !== undefined &&
    through !== null &&
    facts.log_from !== null &&
    through > facts.log_from
      ? through
      : null;
  const reconcile = status.reconcile;
  const listing =
    reconcile?.last_listing && reconcile.pending === 0
      ? Date.parse(reconcile.last_listing.started_at)
      : null;
  const sessions = new Map(facts.sessions.map((session) => [session.id, session]));
  const byStream = new Set(
    facts.sessions
      .filter((session) => session.deleted_kind === 'recorded')
      .map((session) => `${session.id}@${session.deleted_at_ms}`),
  );
  const fromStream = received.results.filter((row) =>
    byStream.has(`${row.id}@${row.deleted_at_ms}`),
  ).length;

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
    retrying_below_checkpoint: undelivered.length - missing.length,
    deletes_delivered: received.results.length,
    deletes: {
      recorded: deletes.recorded,
      hard: deletes.hard,
      from_deletions_stream: fromStream,
      from_reconcile: received.results.length - fromStream,
    },
    mirror: compareMirror({
      sessions,
      mirror: mirror.results,
      logFrom: facts.log_from,
      deletionsThrough,
      listing,
      // Deletes a listing confirmed are delivered unless held (its upserts are either way):
      // those of ids gone before the listing before it (R16: two listings lacked them).
      listingDeletes:
        reconcile?.held || listing === null
          ? null
          : isoToMs(reconcile?.last_listing?.deletes_before ?? null),
      lag,
      runs: lines,
      checkpoint: status.checkpoint,
      retrying,
    }),
  };
}

function isoToMs(text: string | null): number | null {
  return text === null ? null : Date.parse(text);
}
