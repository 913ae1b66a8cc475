import { type Precision, stepPrecision } from '../engine/window.ts';
import { DAY_MS, daysFromCivil } from './calendar.ts';
import { compilePattern, type TimePattern } from './time-pattern.ts';
import { timeZone } from './time-zone.ts';

/**
 * How a window bound is sent (`source.time_format`): `iso` (milliseconds, `Z`),
 * `iso_seconds` (whole seconds, `Z`: SOQL literals), `unix` (seconds), `unix_ms`, or a
 * pattern such as `"yyyy/MM/dd HH:mm"` (sources/time-pattern.ts), written in a time zone.
 */
export type TimeFormat = string;

/** How an updated_at is read (`source.updated_at_format`): `auto`, or a time format. */
export type TimestampFormat = string;

/** The time formats that are words, not patterns. */
export const TIME_FORMAT_WORDS = ['iso', 'iso_seconds', 'unix', 'unix_ms'] as const;
const WORDS: ReadonlySet<string> = new Set(['auto', ...TIME_FORMAT_WORDS]);

/**
 * Formats a window bound for the upstream, in `zone` (an IANA name) for a pattern. Floored to
 * the format's precision, never rounded up: a start rounded up would skip the updates of its
 * first fraction; an end is floored beforehand (boundPrecision), so it is sent exactly.
 */
export function formatTime(ms: number, format: TimeFormat, zone = 'UTC'): string {
  if (format === 'unix') return String(Math.floor(ms / 1000));
  if (format === 'unix_ms') return String(Math.floor(ms));
  if (format === 'iso') return new Date(ms).toISOString();
  if (format === 'iso_seconds') return `${new Date(ms).toISOString().slice(0, -5)}Z`;
  return patternOf(format).format(ms, timeZone(zone));
}

/** Epoch numbers below this are seconds, above it milliseconds (1e11 s is the year 5138). */
const SECONDS_LIMIT = 1e11;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
const EPOCH = /^\d+(\.\d+)?$/;

/**
 * Parses an updated_at to epoch ms, or undefined when it is not one.
 * - `iso` (or `iso_seconds`): an ISO 8601 string with `Z` or an offset, with or without fractions;
 * - `unix` / `unix_ms`: epoch seconds / milliseconds, as a number or a numeric string;
 * - `auto` (default): an ISO string, or an epoch number taken as seconds below 1e11 and as
 *   milliseconds above (1e11 s is the year 5138; 1e11 ms is 1973);
 * - a pattern: a string in it, read in `zone` unless the pattern has an offset (X).
 */
export function parseTimestamp(
  value: unknown,
  format: TimestampFormat = 'auto',
  zone = 'UTC',
): number | undefined {
  // `auto`, the default, first: this runs for every record.
  if (format !== 'auto' && !WORDS.has(format)) {
    return typeof value === 'string' ? patternOf(format).parse(value, timeZone(zone)) : undefined;
  }
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
    if (!Number.isFinite(epoch) || format === 'iso' || format === 'iso_seconds') return undefined;
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
  return (
    daysFromCivil(year, month, day) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + ms
  );
}

/**
 * The precision of a time format, in ms: the unit of its smallest field (1000 for `unix` and
 * `iso_seconds`, 60 000 for `"yyyy/MM/dd HH:mm"`, 1 for `iso`, `unix_ms` and `auto`).
 */
export function precisionOf(format: TimeFormat | TimestampFormat): number {
  if (format === 'unix' || format === 'iso_seconds') return 1000;
  if (WORDS.has(format)) return 1;
  const pattern = compilePattern(format);
  return 'error' in pattern ? 1 : pattern.precision;
}

/**
 * What the upstream reads for a bound sent in `format`: the instant the text sent denotes,
 * the bound floored to the format's precision in its zone, and a wall time the clocks show
 * twice read as its first occurrence. The engine plans windows on it (R1: the checkpoint
 * never passes a bound the upstream was not sent).
 */
export function boundPrecision(format: TimeFormat, zone = 'UTC'): Precision {
  const step = precisionOf(format);
  if (WORDS.has(format)) return stepPrecision(step);
  const pattern = patternOf(format);
  const tz = timeZone(zone);
  // What is sent, read back: exactly what the upstream is asked for.
  return {
    step,
    floor: (at) => pattern.parse(pattern.format(at, tz), tz) ?? Math.floor(at / step) * step,
  };
}

/**
 * Why a `time_format` (or, with `auto`, an `updated_at_format`) is not one, or undefined:
 * for the config's checks, which run before any formatTime or parseTimestamp.
 */
export function timeFormatProblem(format: string, stamps = false): string | undefined {
  if (WORDS.has(format) && (stamps || format !== 'auto')) return undefined;
  const words = [...(stamps ? ['auto'] : []), ...TIME_FORMAT_WORDS].join(', ');
  if (format === 'auto')
    return `"auto" reads stamps only: a bound is sent as one of ${TIME_FORMAT_WORDS.join(', ')} or a pattern`;
  const pattern = compilePattern(format);
  return 'error' in pattern
    ? `"${format}" is not one of ${words}, nor a pattern: it ${pattern.error}`
    : undefined;
}

function patternOf(format: string): TimePattern {
  const pattern = compilePattern(format);
  if ('error' in pattern) throw new Error(`time format "${format}" ${pattern.error}`);
  return pattern;
}
