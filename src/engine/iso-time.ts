/** The largest magnitude a JavaScript Date holds: `toISOString()` throws beyond it. */
const DATE_LIMIT_MS = 8.64e15;

/**
 * A time for status, logs and errors that never throws: whatever an upstream or an old
 * version stored, one bad number must not turn every status page into a 500.
 */
export function isoTime(ms: number): string {
  if (!Number.isFinite(ms) || Math.abs(ms) > DATE_LIMIT_MS) return `invalid time (${ms})`;
  return new Date(ms).toISOString();
}

/** `isoTime`, passing null and undefined through as null. */
export function isoTimeOrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : isoTime(ms);
}

/**
 * The latest time an alarm may be set to: Durable Objects refuse dates after 2189, and an
 * alarm that cannot be set leaves the poller without its crash-recovery ceiling.
 */
export const LATEST_ALARM_MS = Date.parse('2189-01-01T00:00:00Z');

/** An alarm time the platform accepts: finite and not beyond LATEST_ALARM_MS. */
export function settableAlarmTime(at: number): number {
  // A time that is not a number at all fires at once: the alarm then re-derives itself.
  if (Number.isNaN(at)) return 0;
  return Math.min(Math.max(at, 0), LATEST_ALARM_MS);
}
