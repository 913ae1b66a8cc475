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

/** Epoch numbers below this are seconds, above it milliseconds (1e11 s is the year 5138). */
const SECONDS_LIMIT = 1e11;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * Parses an updated_at: an ISO 8601 string with `Z` or an offset, or epoch seconds or
 * milliseconds (as a number or a numeric string). Undefined when it is none of these.
 */
export function parseTimestamp(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? fromEpoch(value) : undefined;
  if (typeof value !== 'string') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return fromEpoch(Number(value));
  if (!ISO_8601.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function fromEpoch(value: number): number {
  return Math.abs(value) < SECONDS_LIMIT ? Math.floor(value * 1000) : Math.floor(value);
}
