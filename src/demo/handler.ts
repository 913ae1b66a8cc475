import type { Handler } from '../handlers/types.ts';
import { parseTimestamp } from '../sources/time.ts';

/**
 * The demo handler: mirrors the sessions into D1 and logs every version received so
 * /demo/audit can prove nothing was lost. An upsert keeps the newest version (an older
 * update arriving late never overwrites a newer one). A delete (op "delete": from the
 * deletions stream, versioned by its deleted_at, or from a reconciliation, versioned by the
 * listing's start) marks the session deleted, only when it is not older than what D1 holds:
 * the row stays as a tombstone at the delete's version, so a late, older update cannot bring
 * the session back, nor an old delete remove a newer session. Idempotent: a repeat changes
 * nothing.
 */
export const demoSessions: Handler = async (record, { op, id, version, env }) => {
  // A listing without reconcile.updated_at sends no version: the record says it.
  const stamp = version === '' && op === 'upsert' ? updatedAtOf(record) : version;
  const versionMs = parseTimestamp(stamp);
  if (versionMs === undefined) throw new Error(`unreadable version ${version}`);
  const now = Date.now();
  if (op === 'delete') {
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO sessions (id, updated_at, updated_at_ms, record, deleted)
         VALUES (?1, ?2, ?3, 'null', 1)
         ON CONFLICT (id) DO UPDATE SET
           deleted = CASE WHEN excluded.updated_at_ms >= updated_at_ms THEN 1 ELSE deleted END,
           updated_at = CASE WHEN excluded.updated_at_ms >= updated_at_ms
             THEN excluded.updated_at ELSE updated_at END,
           updated_at_ms = MAX(updated_at_ms, excluded.updated_at_ms)`,
      ).bind(id, stamp, versionMs),
      env.DB.prepare(
        'INSERT OR IGNORE INTO session_deletes (id, deleted_at_ms, received_at_ms) VALUES (?1, ?2, ?3)',
      ).bind(id, versionMs, now),
    ]);
    return;
  }
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO sessions (id, updated_at, updated_at_ms, record, deleted, upserted_at_ms)
       VALUES (?1, ?2, ?3, ?4, 0, ?5)
       ON CONFLICT (id) DO UPDATE SET
         record = CASE WHEN excluded.updated_at_ms > updated_at_ms THEN excluded.record ELSE record END,
         deleted = CASE WHEN excluded.updated_at_ms > updated_at_ms THEN 0 ELSE deleted END,
         updated_at = CASE WHEN excluded.updated_at_ms > updated_at_ms
           THEN excluded.updated_at ELSE updated_at END,
         updated_at_ms = MAX(updated_at_ms, excluded.updated_at_ms),
         upserted_at_ms = excluded.upserted_at_ms`,
    ).bind(id, stamp, versionMs, JSON.stringify(record), now),
    env.DB.prepare(
      'INSERT OR IGNORE INTO session_versions (id, updated_at_ms, received_at_ms) VALUES (?1, ?2, ?3)',
    ).bind(id, versionMs, now),
  ]);
};

function updatedAtOf(record: unknown): unknown {
  return record !== null && typeof record === 'object'
    ? (record as { updated_at?: unknown }).updated_at
    : undefined;
}
