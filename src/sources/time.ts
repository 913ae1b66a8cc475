export type TimeFormat = 'iso' | 'unix' | 'unix_ms';

/**
 * Formats a window bound for the upstream. Seconds are floored, never rounded up: a start
 * rounded up would skip the updates of its first fraction of a second.
 */
export function formatTime(ms: number, format: TimeFormat): string {
  if (format === 'unix') return String(Math.floor(ms / 1000));
  if (format === 'unix_ms') return String(Math.floor(ms));
  return new Date(ms).toISOString();
}

export type TimestampFormat = 'auto' | 'iso' | 'unix' | 'unix_ms';

/** Epoch numbers below this are seconds, above it milliseconds (1e11 s is the year 5138). */
const SECONDS_LIMIT = 1e11;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const EPOCH = /^\d+(\.\d+)?$/;

/**
 * Parses an updated_at to epoch ms, or undefined when it is not one.
 * - `iso`: an ISO 8601 string with `Z` or an offset, with or without fractions;
 * - `unix` / `unix_ms`: epoch seconds / milliseconds, as a number or a numeric string;
 * - `auto` (default): an ISO string, or an epoch number taken as seconds below 1e11 and as
 *   milliseconds above (1e11 s is the year 5138; 1e11 ms is 1973).
 */
export function parseTimestamp(
  value: unknown,
  format: TimestampFormat = 'auto',
): number | undefined {
  const epoch =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && EPOCH.test(value)
        ? Number(value)
        : undefined;
  if (epoch !== undefined) {
    if (!Number.isFinite(epoch) || format === 'iso') return undefined;
    if (format === 'unix') return Math.floor(epoch * 1000);
    if (format === 'unix_ms') return Math.floor(epoch);
    return Math.abs(epoch) < SECONDS_LIMIT ? Math.floor(epoch * 1000) : Math.floor(epoch);
  }
  if (
    typeof value !== 'string' ||
    format === 'unix' ||
    format === 'unix_ms' ||
    !ISO_8601.test(value)
  ) {
    return undefined;
  }
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The precision of a time format's bounds, in ms: a window end must be sendable exactly. */
export function precisionOf(format: TimeFormat): number {
  return format === 'unix' ? 1000 : 1;
}
