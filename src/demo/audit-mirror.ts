import { isDeletionKey } from '../engine/idempotency.ts';
import type { RetryingUpdate } from '../poller/rpc.ts';
import type { SessionFacts } from './upstream-types.ts';

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

export type MirrorRow = {
  id: string;
  updated_at_ms: number;
  deleted: number;
  upserted_at_ms: number;
};
export type RunLine = { outcome: string; startedAt: number; finishedAt: number };

/** Run outcomes that deliver (a skipped or fenced line of history does not). */
const DELIVERING = new Set(['success', 'partial', 'failed', 'continued']);

/** What the poller has stored as failing (R19), by what the audit looks up. */
export interface Retrying {
  /** Upserts (the main stream's, a listing's): `id@updated_at_ms`. */
  upserts: Set<string>;
  /** Ids with a delete stored as failing (or held behind a failing upsert of the id). */
  deletes: Set<string>;
}

/** The poller's failing updates (its retryingUpdates()), as the audit looks them up. */
export function retryingOf(updates: RetryingUpdate[]): Retrying {
  const retrying: Retrying = { upserts: new Set(), deletes: new Set() };
  for (const update of updates) {
    if (isDeletionKey(update.key)) retrying.deletes.add(update.id);
    else retrying.upserts.add(`${update.id}@${update.version_ms}`);
  }
  return retrying;
}

/**
 * Compares the mirror with the upstream's sessions (see MirrorReport): what tidemark must
 * already have put right counts, newer differences and what is retrying are in flight.
 */
export function compareMirror(input: {
  sessions: Map<string, SessionFacts>;
  mirror: MirrorRow[];
  logFrom: number | null;
  deletionsThrough: number | null;
  listing: number | null;
  listingDeletes: number | null;
  lag: number;
  /** The run history (those that deliver are read). */
  runs: RunLine[];
  checkpoint: string | null;
  retrying: Retrying;
}): MirrorReport {
  const { sessions, listing, listingDeletes, lag, retrying } = input;
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
      if (!DELIVERING.has(run.outcome)) continue;
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
      // What would put it right is stored as failing and retried (R19): in flight.
      if (
        retrying.upserts.has(`${id}@${due}`) ||
        retrying.upserts.has(`${id}@${session.updated_at_ms}`)
      ) {
        report.in_flight += 1;
        continue;
      }
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
    // Its delete is stored as failing, or held behind a failing upsert of its id (R19).
    if (retrying.deletes.has(id)) {
      report.in_flight += 1;
      continue;
    }
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

/** An ISO time, or null. */
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
