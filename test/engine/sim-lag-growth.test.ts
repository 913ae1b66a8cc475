import { describe, expect, it } from 'vitest';
import { LAG_GROWTH } from '../../sim/scenarios.ts';
import { simulate } from '../../sim/simulate.ts';
import { TidemarkStrategy } from '../../sim/strategies.ts';

/** The scenario over one hour instead of two: the lag grows twice as fast. */
const faults = { ...LAG_GROWTH.faults, ticks: 360 };

describe('the simulation: the lag outgrows lag_allowance (short run; npm run sim for the full one)', () => {
  it('tidemark says so, a warning and then "at risk", before it loses its first update', {
    timeout: 60_000,
  }, async () => {
    for (let seed = 1; seed <= 4; seed += 1) {
      const result = await simulate('tidemark', seed, faults);
      expect(
        result.lost,
        `seed ${seed}: lag_allowance is too small here on purpose`,
      ).toBeGreaterThan(0);
      const lostAt = result.firstLossAt ?? 0;
      expect(result.firstWarning?.at, `seed ${seed}`).toBeLessThan(lostAt);
      expect(result.firstAtRisk?.at, `seed ${seed}`).toBeLessThan(lostAt);
      expect(result.firstWarning?.text).toMatch(/more than half of lag_allowance \(10s\)/);
    }
  });

  it('the naive designs lose updates and never say a word', { timeout: 60_000 }, async () => {
    for (const strategy of ['lookback', 'end-time', 'partial-advance', 'short-lease'] as const) {
      const result = await simulate(strategy, 1, faults);
      expect(result.lost, strategy).toBeGreaterThan(0);
      expect(result.firstWarning, strategy).toBeNull();
    }
  });

  it('an operator who raises lag_allowance as tidemark advises loses nothing', {
    timeout: 60_000,
  }, async () => {
    for (let seed = 1; seed <= 4; seed += 1) {
      const result = await simulate('tidemark', seed, faults, (_name, world) => {
        return new TidemarkStrategy(world, { followAdvice: true });
      });
      expect(result.lost, `seed ${seed}`).toBe(0);
      expect(result.firstWarning).not.toBeNull();
    }
  });
});
