/**
 * The deletion trail: owns the `deletions` table, which outlives the pollers it records (who
 * deleted which poller, when, and why), bounded however many pollers come and go.
 */

/**
 * The deletion trail keeps 90 days: long enough to answer "who deleted this customer's poller
 * last quarter", bounded however many pollers come and go.
 */
const DELETIONS_KEPT_MS = 90 * 24 * 60 * 60_000;
/** …and at most this many rows (the newest), so churn cannot grow the registry without bound. */
const DELETIONS_KEPT = 10_000;

/** One deletion, its detail (reason, who finished it) as JSON. */
export interface Deletion {
  name: string;
  at: number;
  detail: string;
}

/**
 * Keeps a deletion, and the trail's bounds as it grows: nothing older than DELETIONS_KEPT_MS,
 * then no more than the newest DELETIONS_KEPT (one indexed delete each; usually nothing).
 */
export function recordDeletion(
  sql: SqlStorage,
  name: string,
  detail: Record<string, unknown>,
  now: number,
): void {
  sql.exec(
    'INSERT INTO deletions (name, at, detail) VALUES (?, ?, ?)',
    name,
    now,
    JSON.stringify(detail),
  );
  sql.exec('DELETE FROM deletions WHERE at < ?', now - DELETIONS_KEPT_MS);
  sql.exec(
    'DELETE FROM deletions WHERE seq <= (SELECT seq FROM deletions ORDER BY seq DESC LIMIT 1 OFFSET ?)',
    DELETIONS_KEPT,
  );
}

/** The newest deletions first. */
export function newestDeletions(sql: SqlStorage, limit: number): Deletion[] {
  return sql
    .exec<{ name: string; at: number; detail: string }>(
      'SELECT name, at, detail FROM deletions ORDER BY seq DESC LIMIT ?',
      limit,
    )
    .toArray();
}
