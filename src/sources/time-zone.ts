import { msFromCivil } from './calendar.ts';

/**
 * An IANA time zone, read through the runtime's Intl (workerd's and Node's carry the tz
 * database): no dependency, and the zone rules of the runtime that sends the request.
 */
export interface TimeZone {
  readonly name: string;
  /** The zone's offset from UTC at an instant, in ms: its wall clock reads `at + offset`. */
  offsetAt(at: number): number;
  /**
   * The instant a wall-clock time (its fields as if UTC, in ms) denotes. A wall time the
   * clocks show twice (when they go back) is its first occurrence, the earlier instant; one
   * they skip (when they go forward) is the instant they jumped, the one its neighbours
   * around it would put it at, so that a later wall time is never an earlier instant.
   */
  instantOf(local: number): number;
}

const HOUR = 3_600_000;
/**
 * Offsets lie between −12 h and +14 h, so the instant of a wall time lies within 15 h of it
 * read as UTC; a zone changes its offset at most once in such a span.
 */
const SPAN = 15 * HOUR;
/**
 * Intl takes ~20 µs per formatToParts, too slow per record: offsets are kept per quarter of
 * an hour (every offset change in the tz database falls on one's edge, or within one that
 * is then read exactly).
 */
const BUCKET = 15 * 60_000;
const MAX_KEPT = 8192;

const UTC: TimeZone = { name: 'UTC', offsetAt: () => 0, instantOf: (local) => local };
const zones = new Map<string, TimeZone>([['UTC', UTC]]);

/** Whether the runtime knows a time zone name (as `time_zone` takes it). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The named zone (kept once made: its offsets are cached). Throws a RangeError on an unknown name. */
export function timeZone(name: string): TimeZone {
  let zone = zones.get(name);
  if (zone === undefined) {
    zone = intlZone(name);
    zones.set(name, zone);
  }
  return zone;
}

function intlZone(name: string): TimeZone {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: name,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  /** The offset at a whole second, as Intl tells it. */
  const exactly = (second: number): number => {
    const wall = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0, ms: 0 };
    for (const part of format.formatToParts(second)) {
      if (part.type === 'literal') continue;
      const value = Number(part.value);
      if (part.type === 'year') wall.year = value;
      else if (part.type === 'month') wall.month = value;
      else if (part.type === 'day') wall.day = value;
      else if (part.type === 'hour') wall.hour = value;
      else if (part.type === 'minute') wall.minute = value;
      else if (part.type === 'second') wall.second = value;
    }
    return msFromCivil(wall) - second;
  };
  const kept = new Map<number, number>();
  const offsetAt = (at: number): number => {
    const bucket = Math.floor(at / BUCKET);
    const known = kept.get(bucket);
    if (known !== undefined) return known;
    const start = bucket * BUCKET;
    const first = exactly(start);
    const last = exactly(start + BUCKET - 1000);
    if (first !== last) return exactly(Math.floor(at / 1000) * 1000); // a change inside it
    if (kept.size >= MAX_KEPT) kept.clear();
    kept.set(bucket, first);
    return first;
  };
  const instantOf = (local: number): number => {
    const before = offsetAt(local - SPAN);
    const after = offsetAt(local + SPAN);
    if (before === after) return local - before;
    // The wall time read with the offset before the change, and with the one after it.
    const withBefore = local - before;
    const withAfter = local - after;
    const beforeHolds = offsetAt(withBefore) === before;
    const afterHolds = offsetAt(withAfter) === after;
    if (beforeHolds && afterHolds) return Math.min(withBefore, withAfter); // shown twice
    if (beforeHolds) return withBefore;
    if (afterHolds) return withAfter;
    // Skipped: neither reading holds, and the jump lies between them.
    return changeBetween(
      offsetAt,
      Math.min(withBefore, withAfter),
      Math.max(withBefore, withAfter),
    );
  };
  return { name, offsetAt, instantOf };
}

/** The first whole second in (lo, hi] whose offset differs from lo's: where the clocks jumped. */
function changeBetween(offsetAt: (at: number) => number, lo: number, hi: number): number {
  let low = Math.floor(lo / 1000) * 1000;
  let high = Math.ceil(hi / 1000) * 1000;
  const start = offsetAt(low);
  while (high - low > 1000) {
    const middle = low + Math.floor((high - low) / 2000) * 1000;
    if (offsetAt(middle) === start) low = middle;
    else high = middle;
  }
  return high;
}
