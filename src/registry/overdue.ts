// Reads the pollers table for the watchdog's overdue queue: owns no table (the registry
// writes each poller's due_at, from its reports and as it hands the overdue ones out).
import { WATCHDOG_COLUMNS, type WatchdogEntry } from './types.ts';

/**
 * The runtime pollers past their due time (their last report said when to expect the next),
 * the most overdue first and at most `limit`, through the `pollers_overdue` index: as cheap at
 * a hundred thousand pollers as at ten. A poller whose alarm the platform lost stops
 * reporting, and is overdue from its first own tick REPORT_EVERY after its last report, plus
 * REPORT_GRACE (poller/due-at.ts).
 */
export function overduePollers(sql: SqlStorage, limit: number, now: number): WatchdogEntry[] {
  return sql.exec<WatchdogEntry>(OVERDUE_QUERY, now, limit).toArray();
}

/** The query (bound to now and the limit), exported for its plan to be checked. */
export const OVERDUE_QUERY = `SELECT ${WATCHDOG_COLUMNS} FROM pollers
  WHERE kind = 'runtime' AND phase = 'active' AND due_at < ?
  ORDER BY due_at LIMIT ?`;
