import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../sim/random.ts';
import { loadPoller } from '../../src/config/load.ts';
import { assessLateness } from '../../src/engine/lateness.ts';
import {
  BUCKET_COUNT,
  bucketOf,
  countAtOrBelow,
  emptyHistogram,
  observe,
  quantile,
  upperBoundMs,
} from '../../src/engine/lateness-histogram.ts';
import { MemoryFreshness } from '../../src/engine/memory-freshness.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { PageResult, RunContext, Update } from '../../src/engine/ports.ts';
import type { Window } from '../../src/engine/window.ts';

const START = Date.parse('2026-06-01T00:00:00Z');
const MINUTE = 60_000;

/** The exact q-quantile of a sample (nearest rank). */
function exactQuantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

type Lag = (random: () => number) => number;

/** An upstream that shows each update `lag` after its updated_at, and a poller polling it. */
function world(options: {
  lag: Lag;
  lagAllowance: string;
  overlap?: string;
  intervalMs: number;
  perSecond: number;
  seed?: number;
  failDelivery?: (update: Update) => boolean;
}) {
  const random = seededRandom(options.seed ?? 7);
  const clock = { now: START };
  const updates: (Update & { visibleAt: number; lagMs: number })[] = [];
  let produced = START;
  let sequence = 0;
  /** Produces the updates stamped up to `until` (the world's past), each with its lag. */
  const produce = (until: number) => {
    const step = 1_000 / options.perSecond;
    for (; produced < until; produced += step) {
      const versionMs = Math.floor(produced + random() * step);
      const lagMs = options.lag(random);
      const id = `r${sequence++}`;
      const version = new Date(versionMs).toISOString();
      updates.push({ id, version, versionMs, record: {}, visibleAt: versionMs + lagMs, lagMs });
    }
  };
  const source = {
    async fetchPage(window: Window, cursor: string | null): Promise<PageResult> {
      const offset = Number(cursor ?? 0);
      const matching = updates.filter(
        (u) =>
          u.versionMs >= window.from &&
          (!window.bounded || u.versionMs < window.to) &&
          u.visibleAt <= clock.now,
      );
      const page = matching.slice(offset, offset + 500);
      const next = offset + 500 < matching.length ? String(offset + 500) : null;
      return { ok: true, updates: page, malformed: [], next };
    },
  };
  const entry = loadPoller(
    'measured',
    {
      cron: '0 0 1 1 *',
      start_from: new Date(START).toISOString(),
      lag_allowance: options.lagAllowance,
      ...(options.overlap ? { overlap: options.overlap } : {}),
      source: { url: 'https://upstream.test/x', from_param: 'from' },
      deliver: { type: 'handler', name: 'x' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  const store = new MemoryStore();
  const freshness = new MemoryFreshness();
  const logs: Record<string, unknown>[] = [];
  let alarmAt: number | null = null;
  const context: RunContext = {
    poller: 'measured',
    config: entry.config,
    store,
    freshness,
    source,
    deliverer: {
      deliver: async (items) =>
        items.some((item) => options.failDelivery?.(item.update))
          ? { kind: 'retry', error: 'HTTP 503' }
          : { kind: 'delivered' },
    },
    now: () => clock.now,
    random: () => 0.5,
    log: (line) => logs.push(line),
  };
  const engine = new PollerEngine(context, {
    set: async (at) => {
      alarmAt = at;
    },
  });
  return {
    config: entry.config,
    clock,
    store,
    freshness,
    logs,
    updates,
    engine,
    /** Polls every interval until `until` (each run through the alarm, as in production). */
    async pollUntil(until: number) {
      while (clock.now + options.intervalMs <= until) {
        clock.now += options.intervalMs;
        produce(clock.now);
        await engine.trigger('cron');
        for (let step = 0; step < 100 && alarmAt !== null && alarmAt <= clock.now; step += 1)
          await engine.onAlarm();
      }
    },
  };
}

describe('the lateness histogram', () => {
  it('puts a value in the first bucket whose bound is at or above it, 8 buckets per doubling', () => {
    expect(upperBoundMs(bucketOf(1_000))).toBe(1_000);
    expect(upperBoundMs(bucketOf(1_001))).toBeCloseTo(1_000 * 2 ** (1 / 8), 6);
    expect(bucketOf(2_000) - bucketOf(1_000)).toBe(8);
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(10 * 86_400_000)).toBe(BUCKET_COUNT - 1); // a week late: the last bucket
  });

  it('reads quantiles within a few percent of the exact ones, for a wide spread', () => {
    const random = seededRandom(3);
    const values = Array.from({ length: 50_000 }, () => Math.exp(random() * 12)); // 1 ms to 45 h
    const histogram = emptyHistogram();
    for (const value of values) observe(histogram, value);
    for (const q of [0.5, 0.9, 0.99]) {
      const exact = exactQuantile(values, q);
      expect(Math.abs((quantile(histogram, q) ?? 0) - exact) / exact).toBeLessThan(0.03);
    }
    expect(histogram.maxMs).toBe(Math.max(...values));
    expect(Object.keys(histogram.buckets).length).toBeLessThanOrEqual(BUCKET_COUNT);
    expect(countAtOrBelow(histogram, 1_000)).toBe(values.filter((v) => v <= 1_000).length);
  });
});

describe('observed lateness, measured against an upstream with a known lag', () => {
  it("an exponential lag (mean 4 s, p99 18 s): the histogram's p99 is within 5% of the true one", async () => {
    const w = world({
      lag: (random) => -Math.log(1 - random()) * 4_000,
      lagAllowance: '1m',
      intervalMs: 1_000,
      perSecond: 10,
    });
    await w.pollUntil(START + 20 * MINUTE);
    const measured = w.freshness.lateness(w.clock.now).allTime;
    const shown = w.updates.filter((u) => u.visibleAt <= w.clock.now - MINUTE);
    const truth = exactQuantile(
      shown.map((u) => u.lagMs),
      0.99,
    );
    expect(truth).toBeGreaterThan(15_000);
    expect(measured.count).toBeGreaterThan(0.7 * shown.length); // most were late by > 1 poll
    expect(Math.abs((quantile(measured, 0.99) ?? 0) - truth) / truth).toBeLessThan(0.05);
    const trueMax = Math.max(...shown.map((u) => u.lagMs));
    expect(measured.maxMs).toBeLessThanOrEqual(trueMax); // a lower bound, by construction
    expect(measured.maxMs).toBeGreaterThan(trueMax - 1_000); // within one poll interval
    expect(measured.nearMisses).toBe(0);
  });

  it('a uniform lag up to 20 s: p50 and p99 within 5%, and no record counted twice', async () => {
    const w = world({
      lag: (random) => random() * 20_000,
      lagAllowance: '30s',
      intervalMs: 500,
      perSecond: 5,
    });
    await w.pollUntil(START + 20 * MINUTE);
    const measured = w.freshness.lateness(w.clock.now).allTime;
    const shown = w.updates.filter((u) => u.visibleAt <= w.clock.now - MINUTE);
    for (const q of [0.5, 0.99]) {
      const truth = exactQuantile(
        shown.map((u) => u.lagMs),
        q,
      );
      expect(Math.abs((quantile(measured, q) ?? 0) - truth) / truth).toBeLessThan(0.05);
    }
    expect(measured.count).toBeLessThanOrEqual(w.updates.length);
  });

  it('a slow poller (every 5 min) measures a 2 s lag as at most 2 s, never as its interval', async () => {
    const w = world({
      lag: (random) => random() * 2_000,
      lagAllowance: '5s',
      intervalMs: 5 * MINUTE,
      perSecond: 2,
    });
    await w.pollUntil(START + 60 * MINUTE);
    const measured = w.freshness.lateness(w.clock.now).allTime;
    expect(measured.count).toBeGreaterThan(0);
    expect(measured.maxMs).toBeLessThan(2_000);
  });

  it('counts nothing when the lag is zero, and nothing on the first window (nothing to compare)', async () => {
    const w = world({ lag: () => 0, lagAllowance: '5s', intervalMs: 1_000, perSecond: 5 });
    await w.pollUntil(START + 5 * MINUTE);
    expect(w.freshness.lateness(w.clock.now).allTime.count).toBe(0);
  });

  it('counts a late record once, even when its first delivery fails and the next run retries it', async () => {
    let failures = 1;
    const w = world({
      lag: () => 0,
      lagAllowance: '5s',
      intervalMs: 1_000,
      perSecond: 5,
      failDelivery: (update) => update.id === 'late' && failures-- > 0,
    });
    await w.pollUntil(START + 10_000);
    // Stamped 1 s ago, shown 3 s from now: the next runs ask for it before it is visible.
    const at = w.clock.now - 1_000;
    const version = new Date(at).toISOString();
    w.updates.push({
      id: 'late',
      version,
      versionMs: at,
      record: {},
      visibleAt: at + 4_000,
      lagMs: 4_000,
    });
    await w.pollUntil(START + 20_000);
    expect(failures).toBe(-1); // it failed once, then was delivered
    expect(w.store.failures.size).toBe(0);
    const measured = w.freshness.lateness(w.clock.now).allTime;
    expect(measured.count).toBe(1);
    expect(measured.maxMs).toBeGreaterThanOrEqual(3_000); // within one poll of its 4 s
    expect(measured.maxMs).toBeLessThanOrEqual(4_000);
  });
});

describe('the verdict: warning above 50% of lag_allowance, at risk above 80%', () => {
  const verdictFor = async (maxLagMs: number, lagAllowance: string, overlap?: string) => {
    const w = world({
      lag: (random) => random() * maxLagMs,
      lagAllowance,
      ...(overlap ? { overlap } : {}),
      intervalMs: 1_000,
      perSecond: 5,
    });
    await w.pollUntil(START + 10 * MINUTE);
    const summary = w.freshness.lateness(w.clock.now);
    return { verdict: assessLateness(summary, w.config), summary, w };
  };

  it('a lag up to 4 s against lag_allowance 10s is fine', async () => {
    const { verdict } = await verdictFor(4_000, '10s');
    expect(verdict).toMatchObject({ risk: 'ok', warning: null });
  });

  it('up to 6.5 s: a warning, with the value to raise it to (2× the highest seen)', async () => {
    const { verdict, summary, w } = await verdictFor(6_500, '10s');
    expect(verdict.risk).toBe('warning');
    expect(verdict.suggestedMs).toBe(Math.ceil((2 * summary.last24h.maxMs) / 1000) * 1000);
    expect(verdict.warning).toMatch(
      /more than half of lag_allowance \(10s\).*raise lag_allowance to 1[23]s/,
    );
    // Said in the run's log line too.
    expect(w.logs.some((line) => line.lateness_risk === 'warning')).toBe(true);
  });

  it('up to 9 s: at risk', async () => {
    const { verdict } = await verdictFor(9_000, '10s');
    expect(verdict.risk).toBe('at_risk');
    expect(verdict.warning).toMatch(
      /^at risk: .* of lag_allowance \(10s\): an update later than lag_allowance is missed for good; raise lag_allowance to 1[78]s/,
    );
  });

  it('a record later than lag_allowance, caught only by overlap, is a near miss, said loudly', async () => {
    const { verdict, summary, w } = await verdictFor(8_000, '3s', '10s');
    expect(summary.last24h.nearMisses).toBeGreaterThan(0);
    expect(summary.lastNearMiss?.latenessMs).toBeGreaterThan(3_000);
    expect(verdict.risk).toBe('at_risk');
    expect(verdict.warning).toMatch(
      /^NEAR MISS, at risk: \d+ updates in the last 24 h became visible later than lag_allowance \(3s\)/,
    );
    const logged = w.logs.filter((line) => line.event === 'near_miss');
    expect(logged.length).toBeGreaterThan(0);
    expect(logged[0]).toMatchObject({ level: 'warn', poller: 'measured' });
  });

  it('keeps only the last 24 hours by the hour, and all time apart', async () => {
    const freshness = new MemoryFreshness();
    const histogram = emptyHistogram();
    observe(histogram, 5_000);
    for (let hour = 0; hour < 48; hour += 1) {
      freshness.recordLateness(START + hour * 3_600_000, {
        histogram,
        nearMiss: null,
        coverage: null,
      });
    }
    const summary = freshness.lateness(START + 47 * 3_600_000);
    expect(summary.last24h.count).toBe(24);
    expect(summary.allTime.count).toBe(48);
  });
});
