import type { Handler } from '../handlers/types.ts';
import { parseTimestamp } from '../sources/time.ts';

/**
 * The demo handler: upserts each session into D1, keeping the newest version (an older
 * update arriving late never overwrites a newer one), and logs every version received so
 * /demo/audit can prove nothing was lost. Idempotent: a repeat changes nothing.
 */
export const demoSessions: Handler = async (record, { id, version, env }) => {
  const versionMs = parseTimestamp(version);
  if (versionMs === undefined) throw new Error(`unreadable version ${version}`);
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO sessions (id, updated_at, updated_at_ms, record) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, updated_at_ms = excluded.updated_at_ms,
         record = excluded.record
       WHERE excluded.updated_at_ms > sessions.updated_at_ms`,
    ).bind(id, version, versionMs, JSON.stringify(record)),
    env.DB.prepare(
      'INSERT OR IGNORE INTO session_versions (id, updated_at_ms, received_at_ms) VALUES (?1, ?2, ?3)',
    ).bind(id, versionMs, Date.now()),
  ]);
};
