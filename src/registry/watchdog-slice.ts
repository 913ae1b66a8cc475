// Reads the pollers table for the watchdog: owns no table (the registry keeps its place).
import { overduePollers } from './overdue.ts';
import { WATCHDOG_COLUMNS, type WatchdogEntry } from './types.ts';

/** What the watchdog visits in one tick. */
export interface WatchdogShare {
  stuck: WatchdogEntry[];
  /** Runtime pollers past their due time, the most overdue first (registry/overdue.ts). */
  overdue: WatchdogEntry[];
  /** The round robin's next runtime pollers, less those already overdue. */
  slice: WatchdogEntry[];
  total: number;
  /** Where this tick stopped: the next one starts after it. */
  last: string;
}

/**
 * The watchdog's share of one tick: runtime pollers left half-way (configuring or deleting
 * for longer than `stuckFor`), up to `limit` runtime pollers past their due time, and the
 * round robin's next runtime pollers in name order after where the last tick stopped
 * (`after`, and the share's `last` for the next tick): as many as go round every active
 * runtime poller in `round` ticks, and at least `limit`. Every poller is visited at least once
 * a round whatever it reported, which is how a lost alarm is found within `round` ticks at
 * any fleet size.
 */
export function watchdogShare(
  sql: SqlStorage,
  limit: number,
  stuckFor: number,
  now: number,
  /** Where the last tick stopped (the registry keeps it in `registry_meta`). */
  after: string,
  /** Ticks in which the round robin visits every active runtime poller once. */
  round: number,
  /** The round robin's share at most: what this tick can visit (the cursor moves as far). */
  most = Number.POSITIVE_INFINITY,
): WatchdogShare {
  // Both counts in one pass over the table: the fleet's size, and the round's to share out.
  const { total, active } = sql
    .exec<{ total: number; active: number | null }>(
      "SELECT COUNT(*) AS total, SUM(kind = 'runtime' AND phase = 'active') AS active FROM pollers",
    )
    .one();
  const share = Math.min(most, Math.max(limit, Math.ceil((active ?? 0) / Math.max(1, round))));
  const stuck = sql
    .exec<WatchdogEntry>(
      `SELECT ${WATCHDOG_COLUMNS} FROM pollers WHERE phase != 'active' AND updated_at < ? ORDER BY updated_at LIMIT ?`,
      now - stuckFor,
      limit,
    )
    .toArray();
  let rows = sql
    .exec<WatchdogEntry>(
      `SELECT ${WATCHDOG_COLUMNS} FROM pollers WHERE kind = 'runtime' AND phase = 'active' AND name > ? ORDER BY name LIMIT ?`,
      after,
      share,
    )
    .toArray();
  if (rows.length < share && after !== '') {
    // Wrapped around: start again from the first name.
    const more = sql
      .exec<WatchdogEntry>(
        `SELECT ${WATCHDOG_COLUMNS} FROM pollers WHERE kind = 'runtime' AND phase = 'active' AND name <= ? ORDER BY name LIMIT ?`,
        after,
        share - rows.length,
      )
      .toArray();
    rows = [...rows, ...more];
  }
  const overdue = overduePollers(sql, limit, now);
  // Visited once: an overdue poller the round robin also reached is not visited twice.
  const taken = new Set(overdue.map((entry) => entry.name));
  const slice = rows.filter((entry) => !taken.has(entry.name));
  return { stuck, overdue, slice, total, last: rows.at(-1)?.name ?? '' };
}
