// The demo upstream's tables (upstream.ts owns their rows): updates, demo_meta, session_state, deletions.

/** Creates the demo upstream's tables, if they are not there yet. */
export function createDemoTables(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS updates (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    visible_at_ms INTEGER NOT NULL,
    record TEXT NOT NULL
  )`);
  sql.exec('CREATE INDEX IF NOT EXISTS updates_by_time ON updates (updated_at_ms, seq)');
  sql.exec('CREATE INDEX IF NOT EXISTS updates_by_id ON updates (id, updated_at_ms)');
  sql.exec('CREATE TABLE IF NOT EXISTS demo_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)');
  // Each session's state now: its latest update, and whether (and how) it was deleted.
  sql.exec(`CREATE TABLE IF NOT EXISTS session_state (
    id TEXT PRIMARY KEY,
    created_at_ms INTEGER NOT NULL,
    first_visible_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    visible_at_ms INTEGER NOT NULL,
    record TEXT NOT NULL,
    deleted_at_ms INTEGER,
    deleted_kind TEXT
  )`);
  // The deletions log: recorded deletes only (a hard delete is in session_state alone).
  sql.exec(`CREATE TABLE IF NOT EXISTS deletions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    deleted_at_ms INTEGER NOT NULL,
    visible_at_ms INTEGER NOT NULL
  )`);
  sql.exec('CREATE INDEX IF NOT EXISTS deletions_by_time ON deletions (deleted_at_ms, seq)');
}

/**
 * An upstream from before deletes (its updates only, sess_001…sess_040): its sessions' state
 * read from its updates (in the caller's transaction). Returns the number the next new
 * session takes and how many changes were made so far.
 */
export function adoptEarlierUpdates(sql: SqlStorage): { nextSession: number; changes: number } {
  const sessions = sql
    .exec<{ id: string; created: number; first_visible: number }>(
      `SELECT id, MIN(updated_at_ms) AS created, MIN(visible_at_ms) AS first_visible
       FROM updates GROUP BY id`,
    )
    .toArray();
  for (const session of sessions) {
    const latest = sql
      .exec<{ updated_at_ms: number; visible_at_ms: number; record: string }>(
        `SELECT updated_at_ms, visible_at_ms, record FROM updates WHERE id = ?
         ORDER BY updated_at_ms DESC, seq DESC LIMIT 1`,
        session.id,
      )
      .one();
    sql.exec(
      `INSERT OR IGNORE INTO session_state
         (id, created_at_ms, first_visible_at_ms, updated_at_ms, visible_at_ms, record)
       VALUES (?, ?, ?, ?, ?, ?)`,
      session.id,
      session.created,
      session.first_visible,
      latest.updated_at_ms,
      latest.visible_at_ms,
      latest.record,
    );
  }
  const numbers = sessions.map((session) => Number(/^sess_(\d+)$/.exec(session.id)?.[1] ?? 0));
  const changes = sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM updates').one().n;
  return { nextSession: Math.max(0, ...numbers) + 1, changes };
}
