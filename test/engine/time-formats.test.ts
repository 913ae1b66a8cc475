import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { planWindow } from '../../src/engine/window.ts';
import { boundPrecision, formatTime, parseTimestamp, precisionOf } from '../../src/sources/time.ts';
import { compilePattern } from '../../src/sources/time-pattern.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const JIRA = 'yyyy/MM/dd HH:mm';
const LA = 'America/Los_Angeles';
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) =>
  ms === undefined ? 'undefined' : new Date(ms).toISOString();

/** The errors of a poller whose source has these keys (none when it loads). */
function errorsOf(source: Record<string, unknown>, top: Record<string, unknown> = {}): string[] {
  const entry = loadPoller(
    'p',
    {
      cron: '* * * * *',
      ...top,
      source: { url: 'https://api.example.com/x', from_param: 'since', ...source },
      deliver: { type: 'handler', name: 'x' },
    },
    {},
  );
  return entry.ok ? [] : entry.errors;
}

describe('sending window bounds', () => {
  it('sends iso_seconds as whole seconds with Z, floored', () => {
    expect(formatTime(at('2026-01-01T10:00:59.999Z'), 'iso_seconds')).toBe('2026-01-01T10:00:59Z');
    expect(precisionOf('iso_seconds')).toBe(1000);
  });

  it('writes a pattern as the wall time of its zone, floored to its smallest field', () => {
    const t = at('2026-07-01T17:45:30.250Z');
    expect(formatTime(t, JIRA)).toBe('2026/07/01 17:45');
    expect(formatTime(t, JIRA, LA)).toBe('2026/07/01 10:45'); // PDT, UTC−7
    expect(formatTime(t, JIRA, 'Asia/Kolkata')).toBe('2026/07/01 23:15');
    expect(formatTime(t, 'yyyy-MM-dd HH:mm:ss.SSS', 'Europe/Berlin')).toBe(
      '2026-07-01 19:45:30.250',
    );
    expect(formatTime(t, 'dd.MM.yyyy')).toBe('01.07.2026');
  });

  it("writes quoted text as it is, and X, XX, XXX as Z or the zone's offset", () => {
    const t = at('2026-01-15T08:00:00Z');
    expect(formatTime(t, "yyyy-MM-dd'T'HH:mm:ssXXX", LA)).toBe('2026-01-15T00:00:00-08:00');
    expect(formatTime(t, "yyyy-MM-dd'T'HH:mm:ssXX", LA)).toBe('2026-01-15T00:00:00-0800');
    expect(formatTime(t, "yyyy-MM-dd'T'HH:mmX", LA)).toBe('2026-01-15T00:00-08');
    expect(formatTime(t, "yyyy-MM-dd'T'HH:mmX", 'Asia/Kolkata')).toBe('2026-01-15T13:30+0530');
    expect(formatTime(t, "yyyy-MM-dd'T'HH:mm:ssXXX")).toBe('2026-01-15T08:00:00Z');
    expect(formatTime(t, "yyyy-MM-dd 'at' HH 'o''clock'", 'UTC')).toBe("2026-01-15 at 08 o'clock");
  });

  it("floors every bound to the format's precision: a minute for a pattern in minutes, a second for iso_seconds and unix", () => {
    expect(precisionOf(JIRA)).toBe(MINUTE);
    expect(precisionOf('yyyy-MM-dd HH:mm:ss.SSS')).toBe(1);
    expect(precisionOf('yyyy-MM-dd')).toBe(24 * HOUR);
    const minute = boundPrecision(JIRA, LA);
    expect(iso(minute.floor(at('2026-07-01T10:00:45Z')))).toBe('2026-07-01T10:00:00.000Z');
    expect(iso(boundPrecision('iso_seconds').floor(at('2026-07-01T10:00:45.900Z')))).toBe(
      '2026-07-01T10:00:45.000Z',
    );
    expect(boundPrecision('iso').floor(1234.5)).toBe(1234);
  });
});

describe('reading stamps in a pattern', () => {
  it('reads a stamp without an offset in time_zone, and one with an offset as written', () => {
    expect(iso(parseTimestamp('2026/07/01 10:45', JIRA, LA))).toBe('2026-07-01T17:45:00.000Z');
    expect(iso(parseTimestamp('2026/07/01 10:45', JIRA))).toBe('2026-07-01T10:45:00.000Z');
    const withOffset = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX";
    expect(iso(parseTimestamp('2026-07-01T10:45:00.500+05:30', withOffset, LA))).toBe(
      '2026-07-01T05:15:00.500Z',
    );
    // Any of X's forms, whichever the upstream writes.
    for (const text of ['2026-07-01T10:45Z', '2026-07-01T03:45-07', '2026-07-01T03:45-0700']) {
      expect(iso(parseTimestamp(text, "yyyy-MM-dd'T'HH:mmX", 'Asia/Tokyo'))).toBe(
        '2026-07-01T10:45:00.000Z',
      );
    }
  });

  it('reads a wall time the clocks show twice as its first occurrence: the earlier, older instant', () => {
    // Los Angeles goes back from 02:00 PDT to 01:00 PST on 2026-11-01 (09:00Z).
    expect(iso(parseTimestamp('2026/11/01 01:30', JIRA, LA))).toBe('2026-11-01T08:30:00.000Z');
    expect(iso(parseTimestamp('2026/11/01 00:59', JIRA, LA))).toBe('2026-11-01T07:59:00.000Z');
    expect(iso(parseTimestamp('2026/11/01 02:00', JIRA, LA))).toBe('2026-11-01T10:00:00.000Z');
    // Lord Howe goes back half an hour, from 02:00 (+11) to 01:30 (+10:30), on 2026-04-05.
    expect(iso(parseTimestamp('2026/04/05 01:45', JIRA, 'Australia/Lord_Howe'))).toBe(
      '2026-04-04T14:45:00.000Z',
    );
  });

  it('reads a wall time the clocks skip as the instant they jumped, so a later wall time is never an earlier instant', () => {
    // Los Angeles jumps from 02:00 PST to 03:00 PDT on 2026-03-08 (10:00Z).
    const read = (text: string) => parseTimestamp(text, JIRA, LA) ?? Number.NaN;
    expect(iso(read('2026/03/08 02:30'))).toBe('2026-03-08T10:00:00.000Z');
    expect(iso(read('2026/03/08 02:00'))).toBe('2026-03-08T10:00:00.000Z');
    expect(iso(read('2026/03/08 03:00'))).toBe('2026-03-08T10:00:00.000Z');
    expect(read('2026/03/08 01:59')).toBeLessThan(read('2026/03/08 02:30'));
    expect(read('2026/03/08 02:30')).toBeLessThanOrEqual(read('2026/03/08 03:01'));
    // Berlin jumps from 02:00 to 03:00 on 2026-03-29 (01:00Z).
    expect(iso(parseTimestamp('2026/03/29 02:15', JIRA, 'Europe/Berlin'))).toBe(
      '2026-03-29T01:00:00.000Z',
    );
  });

  it('refuses a stamp that does not match its pattern exactly', () => {
    for (const bad of [
      '2026/7/01 10:45', // a field short of its width
      '2026/07/01 10:45:00', // text after the pattern
      '2026-07-01 10:45', // another separator
      '2026/02/30 10:00', // a day the month does not have
      '2026/07/01 24:00',
      '2026-07-01T10:45:00.000Z', // ISO is not this pattern
      '',
      1_782_900_000,
      null,
    ]) {
      expect(parseTimestamp(bad, JIRA, LA), String(bad)).toBeUndefined();
    }
    expect(parseTimestamp('2026-07-01T10:45+25:00', "yyyy-MM-dd'T'HH:mmXXX")).toBeUndefined();
  });

  it('compiles a pattern once, not once per record', () => {
    expect(compilePattern(JIRA)).toBe(compilePattern(JIRA));
  });

  it('reads what it writes: format then parse gives the floored instant, in any zone', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    const patterns = [JIRA, 'yyyy-MM-dd HH:mm:ss', 'yyyy-MM-dd HH:mm:ss.SSS', 'yyyyMMddHH'];
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.constantFrom(...patterns),
        // 1980 to 2100: every zone's offset is in whole minutes (not so in LMT times).
        fc.integer({ min: 315_532_800_000, max: 4_102_444_800_000 }),
        (zone, pattern, t) => {
          const text = formatTime(t, pattern, zone);
          const read = parseTimestamp(text, pattern, zone);
          expect(read).toBe(boundPrecision(pattern, zone).floor(t));
          if (read === undefined) return;
          expect(read).toBeLessThanOrEqual(t);
          expect(formatTime(read, pattern, zone)).toBe(text);
          // Within one unit, or a clock change (at most 2 h) more in an hour shown twice.
          expect(t - read).toBeLessThan(precisionOf(pattern) + 2 * HOUR);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('reads what it writes with an offset exactly, to the unit, in any zone', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    const pattern = "yyyy-MM-dd'T'HH:mm:ssXXX";
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: 315_532_800_000, max: 4_102_444_800_000 }),
        (zone, t) => {
          expect(parseTimestamp(formatTime(t, pattern, zone), pattern, zone)).toBe(
            Math.floor(t / 1000) * 1000,
          );
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('window bounds across daylight saving time', () => {
  // Each zone's changes of 2026: New York and Berlin an hour, Lord Howe half an hour.
  const changes = [
    { zone: 'America/New_York', at: ['2026-03-08T07:00:00Z', '2026-11-01T06:00:00Z'] },
    { zone: 'Europe/Berlin', at: ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z'] },
    { zone: 'Australia/Lord_Howe', at: ['2026-04-04T15:00:00Z', '2026-10-03T15:30:00Z'] },
  ];
  const wall = (ms: number, zone: string) => formatTime(ms, JIRA, zone);

  it('sends a window end in an hour shown twice as its first occurrence', () => {
    const precision = boundPrecision(JIRA, 'America/New_York');
    // 01:30 EST, the second 01:30 of 2026-11-01 in New York, is sent as the first, 01:30 EDT.
    const window = planWindow({
      checkpoint: at('2026-11-01T04:00:00Z'),
      overlap: 0,
      maxWindow: undefined,
      bounded: true,
      now: at('2026-11-01T06:30:20Z'),
      precision,
    });
    expect(iso(window.to)).toBe('2026-11-01T05:30:00.000Z');
    expect(wall(window.to, 'America/New_York')).toBe('2026/11/01 01:30');
  });

  it('moves a backlog window whose checkpoint is in the second occurrence of a repeated hour on past it', () => {
    const zone = 'America/New_York';
    const checkpoint = at('2026-11-01T06:13:40Z'); // 01:13:40 EST, the second 01:13
    const window = planWindow({
      checkpoint,
      overlap: 0,
      maxWindow: 5 * MINUTE,
      bounded: true,
      now: at('2026-11-01T08:00:00Z'),
      precision: boundPrecision(JIRA, zone),
    });
    // Sent from the first 01:13 (EDT): an end at 01:18 would read before C, and C would never move.
    expect(wall(window.from, zone)).toBe('2026/11/01 01:13');
    expect(iso(window.from)).toBe('2026-11-01T05:13:00.000Z');
    expect(window.to).toBeGreaterThan(checkpoint);
    expect(wall(window.to, zone)).toBe('2026/11/01 02:03');
    expect(window.cut).toBe(true);
  });

  it("never inverts a window's local bounds and skips no instant, window after window", () => {
    for (const { zone, at: instants } of changes) {
      const precision = boundPrecision(JIRA, zone);
      fc.assert(
        fc.property(
          fc.constantFrom(...instants.map(at)),
          fc.integer({ min: -3 * HOUR, max: 3 * HOUR }),
          fc.integer({ min: 0, max: 4 * HOUR }),
          fc.integer({ min: 5, max: 90 }).map((minutes) => minutes * MINUTE),
          fc.constantFrom(0, MINUTE, 5 * MINUTE),
          fc.integer({ min: 0, max: 2 * HOUR }),
          (change, start, ahead, maxWindow, overlap, lag) => {
            let checkpoint = change + start;
            const now = checkpoint + ahead;
            // Every instant from the first checkpoint up to the last one is asked for.
            let covered = checkpoint;
            for (let windows = 0; windows < 500; windows += 1) {
              const window = planWindow({
                checkpoint,
                overlap,
                maxWindow: maxWindow + overlap,
                bounded: true,
                now,
                precision,
              });
              expect(wall(window.from, zone) <= wall(window.to, zone)).toBe(true);
              expect(window.to).toBeLessThanOrEqual(now);
              // Both bounds are exactly what the upstream reads for the text sent.
              expect(parseTimestamp(wall(window.from, zone), JIRA, zone)).toBe(window.from);
              expect(parseTimestamp(wall(window.to, zone), JIRA, zone)).toBe(window.to);
              expect(window.from).toBeLessThanOrEqual(covered);
              const next = Math.max(checkpoint, Math.min(window.to, now - lag));
              covered = Math.max(covered, window.to);
              if (next === checkpoint) break; // caught up, or waiting for the clock
              checkpoint = next;
            }
            expect(checkpoint).toBeGreaterThanOrEqual(Math.min(precision.floor(now), now - lag));
            expect(covered).toBeGreaterThanOrEqual(checkpoint);
          },
        ),
        { numRuns: 150 },
      );
    }
  });
});

describe('what a precision makes unsafe is a config error that says why', () => {
  it('names an unknown letter, a field of the wrong width, and a pattern that is not a whole date', () => {
    expect(errorsOf({ time_format: 'yyyy/MM/dd HH:mm Q' })).toEqual([
      expect.stringContaining(
        'source.time_format: "yyyy/MM/dd HH:mm Q" is not one of iso, iso_seconds, unix, unix_ms, nor a pattern: it has an unknown letter "Q"',
      ),
    ]);
    expect(errorsOf({ updated_at_format: 'yy-MM-dd' })).toEqual([
      expect.stringContaining('source.updated_at_format: "yy-MM-dd" is not one of auto, iso'),
    ]);
    expect(errorsOf({ updated_at_format: 'yy-MM-dd' })[0]).toContain(
      'it has "yy", which is not a field',
    );
    expect(errorsOf({ time_format: 'HH:mm' })[0]).toContain('needs yyyy, MM and dd');
    expect(errorsOf({ time_format: 'yyyy-MM-dd HH:ss' })[0]).toContain('has ss without mm');
    expect(errorsOf({ time_format: "yyyy-MM-dd'T" })[0]).toContain('quote that is not closed');
    expect(errorsOf({ time_format: 'auto' })[0]).toContain('"auto" reads stamps only');
    expect(errorsOf({ time_format: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", time_zone: LA })).toEqual([]);
  });

  it('refuses a time zone the runtime does not know', () => {
    expect(errorsOf({ time_zone: 'America/Springfield' })).toEqual([
      'poller "p": source.time_zone: "America/Springfield" is not a time zone: an IANA name, as "America/Los_Angeles" or "UTC"',
    ]);
    expect(errorsOf({ time_zone: 'Australia/Lord_Howe' })).toEqual([]);
  });

  it('needs lag_allowance of a minute for stamps read in whole minutes', () => {
    expect(errorsOf({ updated_at_format: JIRA, time_zone: LA }, { lag_allowance: '59s' })).toEqual([
      `poller "p": lag_allowance: must be at least 1m with updated_at_format = "${JIRA}": its stamps are whole minutes, so a change reads as older than it is by up to a minute, and a checkpoint less than a minute behind the run's start would pass it`,
    ]);
    expect(errorsOf({ updated_at_format: JIRA }, { lag_allowance: '60s' })).toEqual([]);
    expect(errorsOf({ updated_at_format: 'yyyy-MM-dd HH' }, { lag_allowance: '59m' })[0]).toContain(
      'lag_allowance: must be at least 1h',
    );
    // Seconds are the ledger's own grain: no minimum.
    expect(errorsOf({ updated_at_format: 'yyyy-MM-dd HH:mm:ss' })).toEqual([]);
  });

  it("needs max_window to exceed overlap by one unit of time_format's precision", () => {
    const top = { max_window: '90s', overlap: '31s' };
    expect(errorsOf({ to_param: 'until', time_format: JIRA }, top)).toEqual([
      `poller "p": max_window: must exceed overlap by at least 1m with time_format = "${JIRA}": window ends are whole minutes, so a shorter window would end at the checkpoint and never move`,
    ]);
    expect(errorsOf({ to_param: 'until', time_format: JIRA }, { ...top, overlap: '30s' })).toEqual(
      [],
    );
  });
});
