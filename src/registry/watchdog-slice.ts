import { WATCHDOG_COLUMNS, type WatchdogEntry } from './types.ts';

/** What the watchdog visits in one tick. */
export interface WatchdogShare {
  stuck: WatchdogEntry[];
  slice: WatchdogEntry[];
  total: number;
}

/**
 * The watchdog's share of one tick: runtime pollers left half-way (configuring or deleting
 * for longer than `stuckFor`), and the next `limit` runtime pollers in name order after where
 * the last tick stopped (round robin, its place kept in `registry_meta.watchdog_after`), so a
 * tick's work is bounded however many pollers there are.
 */
export function watchdogShare(
  sql: SqlStorage,
  limit: number,
  stuckFor: number,
  now: number,
): WatchdogShare {
  const stuck = sql
    .exec<WatchdogEntry>(
      `SELECT ${WATCHDOG_COLUMNS} FROM pollers WHERE phase != 'active' AND updated_at < ? ORDER BY updated_at LIMIT ?`,
      now - stuckFor,
      limit,
    )
    .toArray();
  const after =
    sql
      .exec<{ value: string }>("SELECT value FROM registry_meta WHERE key = 'watchdog_after'")
      .toArray()[0]?.value ?? '';
  let rows = sql
    .exec<WatchdogEntry>(
      `SELECT ${WATCHDOG_COLUMNS} FROM pollers WHERE kind = 'runtime' AND phase = 'active' AND name > ? ORDER BY name LIMIT ?`,
      after,
      limit,
    )
    .toArray();
  if (rows.length < limit && after !== '') {
    // Wrapped around: start again from the first name.
    const more = sql
      .exec<WatchdogEntry>(
        `SELECT ${WATCHDOG_COLUMNS} FROM pollers WHERE kind = 'runtime' AND phase = 'active' AND name <= ? ORDER BY name LIMIT ?`,
        after,
        limit - rows.length,
      )
      .toArray();
    rows = [...rows, ...more];
  }
  const last = rows.at(-1)?.name ?? '';
  sql.exec(
    "INSERT INTO registry_meta (key, value) VALUES ('watchdog_after', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    last,
  );
  const total = sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM pollers').one().n;
  return { stuck, slice: rows, total };
}
