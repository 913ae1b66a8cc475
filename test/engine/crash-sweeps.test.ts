import { describe, expect, it } from 'vitest';
import { type Sweeps, shapeRedeliveries, shapeTargets } from '../../bench/crash-shapes.ts';
import { spread } from '../../bench/stats.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import {
  type CrashKind,
  crashTrial,
  type SweepOptions,
  type SweepWorld,
  sweepEvery,
  type Trial,
} from '../support/crash-sweep.ts';
import {
  childrenWorld,
  type Delivery,
  type RoundStart,
  roundWorld,
} from '../support/crash-worlds.ts';

// The real engine killed at every point of a run, as after a SIGKILL (test/support/crash-sweep.ts):
// at each delivery request (in flight), each upstream request (asked, never answered) and
// before each store write. After the recovery and the runs that follow, the receiver holds
// every record the upstream has, in its latest content, and got at most what was in flight
// more than once.

const KINDS: CrashKind[] = ['delivery', 'request', 'write'];
/** Slower than PAGES_KEPT_EVERY_MS: a page that goes on is kept as it is delivered. */
const OPTIONS: SweepOptions = { pageMs: 60 };
const DELIVERY: Delivery = { batch: 1, concurrency: 3 };

/** Every point of every kind: the trials, and what a failing one shows. */
async function sweep(make: () => SweepWorld, options = OPTIONS) {
  const baseline = await crashTrial(make, null, options);
  const trials: { at: string; trial: Trial }[] = [];
  for (const kind of KINDS) {
    const each = await sweepEvery(make, kind, options);
    // The run that dies passes every point of its kind the run without a crash passes.
    expect(each.length).toBe(baseline.passed[kind]);
    trials.push(...each.map((trial, i) => ({ at: `${kind} ${i + 1}`, trial })));
  }
  // The store writes the run died just before: the fenced paths the sweep went through.
  const writes = new Set(
    trials.map(({ at, trial }) => (at.startsWith('write') ? trial.diedAt : null)),
  );
  const lost = trials.filter(({ trial }) => trial.lost.length > 0);
  const most = Math.max(...trials.map(({ trial }) => trial.redeliveries));
  return {
    baseline,
    trials,
    lost: lost.map(({ at, trial }) => `${at}: ${trial.lost.join('; ')}`),
    most,
    writes: [...writes],
  };
}

describe('a crash mid-round', () => {
  // 12 events, 3 to a page: rounds of 4 to 6 pages.
  const cases: [RoundStart, string][] = [
    ['first', 'the first round, from source.url'],
    ['token', 'a round from a token, with changes and cancellations since'],
    ['resync', 'a resync, after the token expired: every event listed again'],
  ];
  for (const [start, what] of cases) {
    it(`${what}: nothing lost, and at most the round's page in flight delivered again`, async () => {
      const page = 3;
      const { baseline, trials, lost, most, writes } = await sweep(() =>
        roundWorld({ start, events: 12, page }, DELIVERY),
      );
      // It died after deliveries and before the per-id memory, the page's ledger row, the
      // round's cursor and the commit with its token.
      expect(writes).toEqual(
        expect.arrayContaining(['rememberIds', 'rememberPage', 'rounds.keepCursor', 'finishRun']),
      );
      expect(baseline.redeliveries).toBe(0);
      expect(baseline.lost).toEqual([]);
      expect(trials.length).toBeGreaterThan(25);
      expect(lost).toEqual([]);
      // The page cursor is kept, and the per-id memory written, as each page is handled:
      // of a page in flight only what reached the receiver before its memory did goes again.
      expect(most).toBeLessThanOrEqual(page);
    });
  }

  it('a crash on the first page of a full round misses an event it sent that is cancelled before the recovery, unless resync_deletes knows it was sent', async () => {
    // No cursor is kept before the first page was handled: the recovery starts the round from
    // source.url again, a new full listing, which shows no cancelled event.
    const first = (resyncDeletes: boolean) => () =>
      roundWorld(
        { start: 'first', events: 12, page: 3, cancelledWhileDead: 1, resyncDeletes },
        DELIVERY,
      );
    const gone = ['ev00001: 2026-09-01T00:00:02.000Z ≠ deleted'];
    // Dead after the page's per-id memory was written, before its cursor was kept: only
    // resync_deletes compares the full round with the ids known, and deletes it.
    const beforeCursor = async (resyncDeletes: boolean) => {
      for (let index = 1; ; index += 1) {
        const trial = await crashTrial(first(resyncDeletes), { kind: 'write', index }, OPTIONS);
        if (!trial.crashed || trial.diedAt === 'rounds.keepCursor') return trial;
      }
    };
    expect((await beforeCursor(false)).lost).toEqual(gone);
    expect((await beforeCursor(true)).lost).toEqual([]);
    // Dead with the event in flight: nothing knows it was sent, resync_deletes neither.
    const inFlight = await crashTrial(first(true), { kind: 'delivery', index: 2 }, OPTIONS);
    expect(inFlight.diedAt).toBe('upsert ev00001');
    expect(inFlight.lost).toEqual(gone);
    // From the second page on, the round goes on at its kept cursor, in the listing it began.
    const later = await crashTrial(first(false), { kind: 'delivery', index: 5 }, OPTIONS);
    expect(later.diedAt).toBe('upsert ev00004');
    expect(later.lost).toEqual([]);
  });
});

describe('a crash mid-children', () => {
  // 3 issues (and a new one) of 4 comments, 2 to a page: 3 child requests per issue, the last
  // one empty; the window's issues come 2 to a page, the first page's kept as it is handled.
  const shape = { issues: 3, comments: 4, page: 2, searchPage: 2 };

  it('inside child pages and between a parent and its handling: nothing lost, at most a child page again', async () => {
    const { baseline, trials, lost, most, writes } = await sweep(() =>
      childrenWorld({ ...shape, deletes: false, deliverParents: false }, DELIVERY),
    );
    expect(baseline.redeliveries).toBe(0);
    expect(baseline.lost).toEqual([]);
    expect(trials.length).toBeGreaterThan(50);
    // It died after a child page's deliveries and before their per-id memory, before the
    // listing's next page was kept, and between a parent's last child page (its listing's
    // end kept) and the parent's own handling (its page kept).
    expect(writes).toEqual(
      expect.arrayContaining(['rememberIds', 'childProgress.keep', 'rememberPage', 'finishRun']),
    );
    expect(lost).toEqual([]);
    // Children are remembered by the per-id memory per child page: one is in flight.
    expect(most).toBeLessThanOrEqual(shape.page);
  });

  it('with children.deletes, in a confirmation listing too: nothing lost, at most a child page again', async () => {
    const { baseline, trials, lost, most } = await sweep(() =>
      childrenWorld({ ...shape, deletes: true, deliverParents: false }, DELIVERY),
    );
    expect(baseline.redeliveries).toBe(0);
    expect(baseline.lost).toEqual([]);
    expect(trials.length).toBeGreaterThan(50);
    expect(lost).toEqual([]);
    // A parent's deletes (here one) go as one batch after its listings: that batch or a
    // child page is in flight.
    expect(most).toBeLessThanOrEqual(shape.page);
  });

  it('with deliver_parents: nothing lost, at most a child page and the parents of the page in flight again', async () => {
    const { baseline, lost, most } = await sweep(() =>
      childrenWorld({ ...shape, deletes: false, deliverParents: true }, DELIVERY),
    );
    expect(baseline.redeliveries).toBe(0);
    expect(lost).toEqual([]);
    // Parents are the window's records (its ledger): those of the page in flight go again.
    expect(most).toBeLessThanOrEqual(shape.page + shape.searchPage);
  });

  it('a listing continued from a kept child page after a crash still deletes a child the parent no longer lists', async () => {
    // ACME-1 lost its first comment and is the window's first parent: the run dies asking
    // for its second child page, after its first was handled (and kept).
    const make = () => childrenWorld({ ...shape, deletes: true, deliverParents: false }, DELIVERY);
    const trial = await crashTrial(make, { kind: 'request', index: 3 }, OPTIONS);
    expect(trial.diedAt).toBe('GET /issue/ACME-1/comment?maxResults=2&startAt=2');
    expect(trial.lost).toEqual([]);
  });
});

describe('the sweep', () => {
  it('sees more than the bound when the per-id memory is not written (the bound can fail)', async () => {
    const make = () =>
      childrenWorld(
        { issues: 1, comments: 5, page: 2, searchPage: 2, deletes: true, deliverParents: false },
        DELIVERY,
      );
    const { most } = await sweep(make, { ...OPTIONS, storage: () => new ForgetfulStore() });
    expect(most).toBeGreaterThan(2);
  });
});

describe('the bench figures of crashes mid-round and mid-children', () => {
  it('come from these sweeps, at seeded delivery requests: nothing lost, none past the page in flight', async () => {
    // The bench loads the sweeps by path (bench/crash-shapes.ts loadSweeps): here they are
    // checked against what it expects of them, and run at a small size.
    const sweeps: Sweeps = { crashTrial, roundWorld, childrenWorld };
    const figures = await shapeRedeliveries(sweeps, 2, { events: 150, issues: 2, comments: 120 });
    expect(figures.variants.map((v) => `${v.where} ${v.pageMs} ms`)).toEqual([
      'mid-round 60 ms',
      'mid-round 60 ms',
      'mid-round 5 ms',
      'mid-children 60 ms',
      'mid-children 5 ms',
    ]);
    for (const variant of figures.variants) {
      expect(variant.lossy).toBe(0);
      expect(variant.redeliveries.max).toBeLessThanOrEqual(variant.bound);
    }
    expect(shapeTargets(figures).map((row) => row[3])).toEqual(['yes', 'yes', 'yes', 'yes', 'yes']);
  });

  it('a crash that lost a record fails its row, whatever its redeliveries', () => {
    const variant = {
      where: 'mid-round' as const,
      batch: 1,
      concurrency: 6,
      pageMs: 60,
      page: 100,
      bound: 100,
      redeliveries: spread([0, 3]),
      askedAgain: spread([1, 2]),
      lossy: 1,
    };
    const figures = { crashes: 2, events: 10, issues: 1, comments: 1, variants: [variant] };
    expect(shapeTargets(figures)[0]?.slice(2)).toEqual(['1.5 (0–3); 1 lost a record', 'no']);
  });
});

/** A store that writes no per-id memory: children listed again are all sent again. */
class ForgetfulStore extends MemoryStore {
  override rememberIds(): boolean {
    return true;
  }
}
