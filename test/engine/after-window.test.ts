import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AfterWindowInput, decideAfterWindow } from '../../src/engine/after-window.ts';
import {
  afterPage,
  partialCheckpoint,
  progressToCommit,
  safeBelow,
  startProgress,
} from '../../src/engine/sorted-progress.ts';

const MIN = 60_000;
const FROM = Date.parse('2026-06-01T00:00:00Z');
const T = FROM + 10 * MIN;
const window = { from: FROM, to: T, bounded: false, startedAt: T, cut: false };

/** A window that ended as `result`, in a run that did nothing else yet, and its defaults. */
function input(overrides: Partial<AfterWindowInput>): AfterWindowInput {
  return {
    result: { kind: 'complete', delivered: [] },
    window,
    checkpoint: FROM,
    T,
    lagAllowance: 0,
    failures: 0,
    stall: null,
    tally: { windows: 0, records: 0, released: 0 },
    now: T + 1_000,
    random: () => 0.5,
    outOfTime: false,
    budgetRemaining: 100,
    windowCost: 3,
    sorted: false,
    bounded: false,
    ...overrides,
  };
}

type Result = AfterWindowInput['result'];
const failed = (extra: Partial<Extract<Result, { kind: 'failed' }>> = {}): Result => ({
  kind: 'failed',
  delivered: [],
  failure: 'transient',
  error: 'HTTP 503',
  ...extra,
});
const incomplete = (extra: Partial<Extract<Result, { kind: 'incomplete' }>> = {}): Result => ({
  kind: 'incomplete',
  delivered: [],
  stop: 'max_run',
  pages: 4,
  ...extra,
});
/** A window max_window cut short of T: a backlog lies beyond it. */
const cut = { ...window, to: FROM + MIN, bounded: true, cut: true };

describe('what comes after a window (decideAfterWindow)', () => {
  it.each([
    ['a complete window that caught up is done, at T', input({}), { kind: 'done', checkpoint: T }],
    [
      'a complete window short of T (max_window) goes on to the next window',
      input({ window: cut }),
      { kind: 'next', checkpoint: FROM + MIN },
    ],
    [
      'a complete window whose successor would not fit in the subrequests left continues in a fresh invocation',
      input({ window: cut, budgetRemaining: 2 }),
      { kind: 'budget', checkpoint: FROM + MIN, wakeup: { reason: 'continuation' } },
    ],
    [
      'a complete window after max_run continues in a fresh invocation',
      input({ window: cut, outOfTime: true }),
      { kind: 'budget', note: 'stopped on the max_run budget; continuing' },
    ],
    [
      'a failed window that achieved nothing backs off one step further',
      input({ result: failed(), failures: 2 }),
      {
        kind: 'failed',
        keep: FROM,
        failures: 3,
        wakeup: { reason: 'retry', failure: 'transient' },
      },
    ],
    [
      'a failed window that delivered some records backs off a few seconds at most',
      input({ result: failed(), failures: 7, tally: { windows: 0, records: 5, released: 0 } }),
      { kind: 'failed', failures: 3 },
    ],
    [
      'a failed window that moved C (sorted) retries at the base delay',
      input({ result: failed({ handledBelow: FROM + MIN }), failures: 7 }),
      { kind: 'failed', keep: FROM + MIN, failures: 1 },
    ],
    [
      'a budget stop after earlier windows moved C continues at once, failures cleared',
      input({ result: incomplete(), tally: { windows: 1, records: 0, released: 0 }, failures: 4 }),
      { kind: 'incomplete', failures: 0, stall: null, wakeup: { at: T + 1_000 } },
    ],
    [
      'a rate limit that moved nothing but delivered continues at the reset, remembering how deep it got',
      input({
        result: incomplete({ stop: 'rate_limit', resumeAt: T + 5 * MIN }),
        tally: { windows: 0, records: 3, released: 0 },
      }),
      { kind: 'incomplete', stall: { from: FROM, pages: 4 }, wakeup: { at: T + 5 * MIN } },
    ],
    [
      'a budget stop no deeper into the same window than last time is a stall: a window too big',
      input({
        result: incomplete(),
        stall: { from: FROM, pages: 4 },
        tally: { windows: 0, records: 3, released: 0 },
        failures: 1,
      }),
      { kind: 'stall', failures: 2, wakeup: { reason: 'retry', failure: 'misconfigured' } },
    ],
    [
      'a budget stop that delivered nothing is a stall at once',
      input({ result: incomplete() }),
      { kind: 'stall', keep: FROM },
    ],
  ] as const)('%s', (_name, given, expected) => {
    expect(decideAfterWindow(given)).toMatchObject(expected);
  });

  it('advises sorted = "asc", to_param and max_window, and the budget that stopped it', () => {
    const decision = decideAfterWindow(input({ result: incomplete({ stop: 'subrequests' }) }));
    expect(decision.kind === 'stall' && decision.error).toContain(
      'set source.sorted = "asc" if the upstream returns records oldest first; or set source.to_param and max_window to split it; or raise max_subrequests',
    );
  });

  it('never keeps C past T − lag_allowance, nor moves it back (R1)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 * MIN }),
        fc.integer({ min: 0, max: 5 * MIN }),
        (handled, lag) => {
          const decision = decideAfterWindow(
            input({ result: failed({ handledBelow: FROM + handled }), lagAllowance: lag }),
          );
          if (decision.kind !== 'failed') return false;
          return decision.keep >= FROM && decision.keep <= Math.max(FROM, T - lag);
        },
      ),
    );
  });
});

describe('sorted progress', () => {
  const page = (...versions: number[]) => versions.map((at) => ({ versionMs: FROM + at }));

  it.each<[string, number[], number[], number[], number]>([
    ['every record of an ordered page handled: up to the last', [1, 2, 3], [], [], 3],
    ['the first record not handled stops the claim before it', [1, 2, 3], [2], [], 1],
    ['a failing version below the claim holds C at it', [1, 2, 3], [], [2], 2],
  ])('%s', (_name, versions, unhandled, failing, expected) => {
    const progress = afterPage(
      startProgress(true),
      page(...versions),
      (record) => !unhandled.some((at) => FROM + at === record.versionMs),
    );
    const failingVersions = failing.map((at) => FROM + at);
    expect(safeBelow(progress, failingVersions)).toBe(FROM + expected);
  });

  it('claims nothing once a page goes back in time, or when the source is not sorted', () => {
    const back = afterPage(startProgress(true), page(1, 3, 2), () => true);
    expect(safeBelow(back, [])).toBeUndefined();
    const unsorted = afterPage(startProgress(false), page(1, 2), () => true);
    expect(safeBelow(unsorted, [])).toBeUndefined();
  });

  it('asks whether a record is handled only while every one before it was', () => {
    const asked: number[] = [];
    afterPage(startProgress(true), page(1, 2, 3, 4), (_record, index) => {
      asked.push(index);
      return index < 1;
    });
    expect(asked).toEqual([0, 1]);
  });

  it('commits progress at most every everyMs, and only forward', () => {
    const at = (now: number, committed = FROM) =>
      progressToCommit({
        handledBelow: FROM + 5 * MIN,
        committed,
        window,
        T,
        lagAllowance: 0,
        now,
        lastCommitAt: T,
        everyMs: 30_000,
      });
    expect(at(T + 10_000)).toBeNull();
    expect(at(T + 30_000)).toBe(FROM + 5 * MIN);
    expect(at(T + 30_000, FROM + 6 * MIN)).toBeNull();
  });

  it('moves C no further than the window and T − lag_allowance', () => {
    expect(partialCheckpoint(FROM + 20 * MIN, FROM, window, T, 0)).toBe(T);
    expect(partialCheckpoint(FROM + 20 * MIN, FROM, window, T, MIN)).toBe(T - MIN);
    expect(partialCheckpoint(undefined, FROM, window, T, 0)).toBe(FROM);
  });
});
