/**
 * One page of a table the demo upstream serves by time: rows stamped in `[from, to)` (in
 * `timeColumn`) that are visible now, oldest first, after the cursor `<time>.<seq>` of the
 * page before. The stream of updates and the deletions log are both paged this way.
 */
export function timePage<T extends { seq: number } & Record<string, SqlStorageValue>>(
  sql: SqlStorage,
  table: 'updates' | 'deletions',
  timeColumn: 'updated_at_ms' | 'deleted_at_ms',
  columns: string,
  query: { from: number; to: number | null; cursor: string | null; limit: number },
  now: number,
): { rows: T[]; next: string | null } {
  const [afterMs, afterSeq] = decodeCursor(query.cursor);
  const rows = sql
    .exec<T>(
      `SELECT ${columns} FROM ${table}
       WHERE ${timeColumn} >= ? AND ${timeColumn} < ? AND visible_at_ms <= ?
         AND (${timeColumn} > ? OR (${timeColumn} = ? AND seq > ?))
       ORDER BY ${timeColumn}, seq LIMIT ?`,
      query.from,
      query.to ?? Number.MAX_SAFE_INTEGER,
      now,
      afterMs,
      afterMs,
      afterSeq,
      query.limit,
    )
    .toArray();
  const last = rows.at(-1);
  const next = rows.length === query.limit && last ? `${last[timeColumn]}.${last.seq}` : null;
  return { rows, next };
}

function decodeCursor(cursor: string | null): [number, number] {
  const match = cursor ? /^(\d+)\.(\d+)$/.exec(cursor) : null;
  return match ? [Number(match[1]), Number(match[2])] : [-1, -1];
}
