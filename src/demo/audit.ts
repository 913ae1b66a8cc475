import { pollerObject, pollerSettings } from '../catalog.ts';
import type { SessionFacts } from './upstream.ts';

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
 * The mirror (D1's live sessions) against the upstream's live sessions, by id and version.
 * A difference counts only once tidemark must have delivered what makes it go: an update
 * stamped below the checkpoint, a logged delete below what the deletions stream has covered,
 * or what the last listing found (once delivered). Newer ones are `in_flight`: that is
 * incremental polling, not a loss.
 */
export interface MirrorReport {
  /** ghosts, missing and stale are all 0. Must stay true. */
  equal: boolean;
  /** Live in D1, deleted upstream. */
  ghosts: number;
  /** Live upstream, not (or deleted) in D1. */
  missing: number;
  /** In both, D1 at an older version than one already delivered. */
  stale: number;
  /** Differences too recent to count yet (the next run or listing makes them go). */
  in_flight: number;
  upstream_live: number;
  mirror_live: number;
  /** What the check counts as delivered: below these. */
  as_of: {
    checkpoint: string | null;
    deletions_stream: string | null;
    last_listing: string | null;
  };
  sample: { id: string; kind: 'ghost' | 'missing' | 'stale'; upstream: string; mirror: string }[];
}

type MirrorRow = { id: string; updated_at_ms: number; deleted: number; upserted_at_ms: number };
type RunLine = { outcome: string; startedAt: number; finishedAt: number };

/** Run outcomes that deliver (a skipped or fenced line of history does not). */
const DELIVERING = new Set(['success', 'failed', 'continued']);

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
  const [status, runs, settings] = await Promise.all([
    object.status(),
    object.runs(100),
    pollerSettings(env, poller),
  ]);
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
  const missing = below.filter((update) => !delivered.has(`${update.id}@${update.updated_at_ms}`));

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
      runs: lines.filter((run) => DELIVERING.has(run.outcome)),
      checkpoint: status.checkpoint,
    }),
  };
}

function compareMirror(input: {
  sessions: Map<string, SessionFacts>;
  mirror: MirrorRow[];
  logFrom: number | null;
  deletionsThrough: number | null;
  listing: number | null;
  listingDeletes: number | null;
  lag: number;
  runs: RunLine[];
  checkpoint: string | null;
}): MirrorReport {
  const { sessions, listing, listingDeletes, lag } = input;
  const rows = new Map(input.mirror.map((row) => [row.id, row]));
  const report: MirrorReport = {
    equal: true,
    ghosts: 0,
    missing: 0,
    stale: 0,
    in_flight: 0,
    upstream_live: 0,
    mirror_live: input.mirror.filter((row) => row.deleted === 0).length,
    as_of: {
      checkpoint: input.checkpoint,
      deletions_stream: iso(input.deletionsThrough),
      last_listing: iso(listing),
    },
    sample: [],
  };
  const found = (
    id: string,
    kind: 'ghost' | 'missing' | 'stale',
    upstream: string,
    mirror: string,
  ) => {
    if (kind === 'ghost') report.ghosts += 1;
    else if (kind === 'missing') report.missing += 1;
    else report.stale += 1;
    if (report.sample.length < 10) report.sample.push({ id, kind, upstream, mirror });
  };
  /** When the run that delivered an upsert at `upsertedAt` had finished, at the latest. */
  const finishedBy = (upsertedAt: number) => {
    if (upsertedAt <= 0) return Number.POSITIVE_INFINITY; // not known (a row from before)
    let finish = Number.POSITIVE_INFINITY;
    for (const run of input.runs) {
      if (run.finishedAt >= upsertedAt) finish = Math.min(finish, run.finishedAt);
    }
    return finish;
  };
  for (const id of new Set([...sessions.keys(), ...rows.keys()])) {
    const session = sessions.get(id);
    const row = rows.get(id);
    const live = row !== undefined && row.deleted === 0;
    const held =
      row === undefined ? 'none' : `${row.deleted ? 'deleted' : 'live'} ${iso(row.updated_at_ms)}`;
    if (session === undefined) {
      if (live) found(id, 'ghost', 'never produced', held);
      continue;
    }
    if (session.deleted_at_ms === null) {
      report.upstream_live += 1;
      const upstream = `live ${iso(session.updated_at_ms)}`;
      if (live && row.updated_at_ms === session.updated_at_ms) continue;
      // Due: an update below the checkpoint, or (a listing was delivered) its listing.
      const due = session.due_ms;
      const listed = listing !== null && session.first_visible_at_ms < listing;
      if (!live) {
        if (due !== null || listed) found(id, 'missing', upstream, held);
        else report.in_flight += 1;
      } else if (
        (due !== null && row.updated_at_ms < due) ||
        row.updated_at_ms > session.updated_at_ms
      ) {
        found(id, 'stale', upstream, held);
      } else {
        report.in_flight += 1;
      }
      continue;
    }
    if (!live) continue; // deleted upstream, deleted (or never there) in D1
    const at = session.deleted_at_ms;
    const upstream = `${session.deleted_kind} delete ${iso(at)}`;
    const byStream =
      session.deleted_kind === 'recorded' &&
      input.logFrom !== null &&
      input.deletionsThrough !== null &&
      at >= input.logFrom &&
      at < input.deletionsThrough;
    // A listing deletes what it lacks of the ids last delivered (upserted) before its start −
    // lag_allowance: the run that upserted it had finished by then.
    const byListing =
      listingDeletes !== null &&
      at < listingDeletes &&
      finishedBy(row.upserted_at_ms) < listingDeletes - lag;
    if (byStream || byListing) found(id, 'ghost', upstream, held);
    else report.in_flight += 1;
  }
  report.equal = report.ghosts + report.missing + report.stale === 0;
  return report;
}

function isoToMs(text: string | null): number | null {
  return text === null ? null : Date.parse(text);
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
