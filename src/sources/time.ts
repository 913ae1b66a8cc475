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
  // The common case first: the canonical ISO form, which no epoch string matches.
  if (typeof value === 'string' && format !== 'unix' && format !== 'unix_ms') {
    const canonical = canonicalUtc(value);
    if (canonical !== undefined) return canonical;
  }
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
  if (typeof value !== 'string' || format === 'unix' || format === 'unix_ms') return undefined;
  if (!ISO_8601.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

const ZERO = 48;
const digit = (text: string, at: number) => text.charCodeAt(at) - ZERO;
const digits = (text: string, from: number, count: number) => {
  let n = 0;
  for (let i = from; i < from + count; i += 1) {
    const d = digit(text, i);
    if (d < 0 || d > 9) return Number.NaN;
    n = n * 10 + d;
  }
  return n;
};

/**
 * `YYYY-MM-DDTHH:MM:SS.sssZ`, the form `toISOString()` writes and most APIs send, read by
 * hand: a timestamp is parsed for every record, and this is several times faster than a
 * regular expression and Date.parse. Only for dates valid in every month (days 1 to 28) and
 * times within the day: anything else, undefined, and the general path decides.
 */
function canonicalUtc(text: string): number | undefined {
  if (
    text.length !== 24 ||
    text[4] !== '-' ||
    text[7] !== '-' ||
    text[10] !== 'T' ||
    text[13] !== ':' ||
    text[16] !== ':' ||
    text[19] !== '.' ||
    text[23] !== 'Z'
  ) {
    return undefined;
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  const ms = digits(text, 20, 3);
  // NaN (a character that is not a digit) fails every one of these.
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 28)) return undefined;
  if (!(hour <= 23 && minute <= 59 && second <= 59 && ms >= 0 && year >= 1000)) return undefined;
  return daysFromCivil(year, month, day) * DAY + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
}

const DAY = 86_400_000;

/**
 * Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil):
 * integer arithmetic, where Date.UTC is a call into the runtime for every record.
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The precision of a time format's bounds, in ms: a window end must be sendable exactly. */
export function precisionOf(format: TimeFormat): number {
  return format === 'unix' ? 1000 : 1;
}
