import { expect } from 'vitest';
import { emptyHistogram, observe, quantile } from '../../src/engine/lateness-histogram.ts';
import type { FreshnessStore, LatenessMeasurement } from '../../src/engine/ports.ts';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-06-01T00:00:00Z');

function measured(latenessMs: number[], nearMisses = 0): LatenessMeasurement {
  const histogram = emptyHistogram();
  for (const [i, ms] of latenessMs.entries()) observe(histogram, ms, i < nearMisses);
  return {
    histogram,
    nearMiss:
      nearMisses > 0 ? { id: 'a', version: 'v', latenessMs: latenessMs[0] ?? 0, at: T0 } : null,
    coverage: null,
  };
}

/**
 * The FreshnessStore contract (nudges and observed lateness), run against the in-memory store
 * (Node) and the SQLite one (workerd) alike. Each case gets a fresh store.
 */
export const freshnessContract: Record<string, (store: FreshnessStore) => void> = {
  'starts with no nudge, no coverage and no lateness'(store) {
    expect(store.nudges()).toEqual({
      pending: false,
      since: null,
      received: 0,
      coalesced: 0,
      actedOn: 0,
      ignored: 0,
    });
    expect(store.coverage()).toBeNull();
    expect(store.lateness(T0)).toMatchObject({ last24h: { count: 0 }, allTime: { count: 0 } });
  },

  'keeps one pending nudge, from the first, until a run takes it'(store) {
    store.recordNudge('pending', T0);
    store.recordNudge('pending', T0 + 5); // a second "pending" does not move `since`
    store.recordNudge('coalesced', T0 + 6);
    store.recordNudge('ignored', T0 + 7);
    expect(store.nudges()).toEqual({
      pending: true,
      since: T0,
      received: 4,
      coalesced: 1,
      actedOn: 0,
      ignored: 1,
    });
    expect(store.takeNudge()).toBe(true);
    expect(store.takeNudge()).toBe(false);
    expect(store.nudges()).toMatchObject({ pending: false, since: null, actedOn: 1 });
  },

  'keeps the coverage of the last completed window'(store) {
    store.recordLateness(T0, {
      histogram: emptyHistogram(),
      nearMiss: null,
      coverage: { to: 10, at: 12, checkpoint: 8 },
    });
    expect(store.coverage()).toEqual({ to: 10, at: 12, checkpoint: 8 });
    store.recordLateness(T0, { histogram: emptyHistogram(), nearMiss: null, coverage: null });
    expect(store.coverage()).toEqual({ to: 10, at: 12, checkpoint: 8 });
  },

  'adds lateness up by the hour, the last 24 hours and all time'(store) {
    store.recordLateness(T0, measured([1_000, 2_000, 3_000]));
    store.recordLateness(T0 + 10 * HOUR, measured([9_000], 1));
    store.recordLateness(T0 + 30 * HOUR, measured([500]));
    const summary = store.lateness(T0 + 30 * HOUR);
    expect(summary.last24h).toMatchObject({ count: 2, maxMs: 9_000, sumMs: 9_500, nearMisses: 1 });
    expect(summary.allTime).toMatchObject({ count: 5, maxMs: 9_000, sumMs: 15_500, nearMisses: 1 });
    // The median (2 s), as its bucket (8 per doubling) can tell: within 5%.
    expect(Math.abs((quantile(summary.allTime, 0.5) ?? 0) / 2_000 - 1)).toBeLessThan(0.05);
    expect(summary.lastNearMiss).toEqual({ id: 'a', version: 'v', latenessMs: 9_000, at: T0 });
  },
};
