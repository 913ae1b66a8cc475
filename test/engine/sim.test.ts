import { describe, expect, it } from 'vitest';
import { SCENARIOS } from '../../sim/scenarios.ts';
import { simulate } from '../../sim/simulate.ts';
import type { Faults } from '../../sim/world.ts';

const scenario = (name: string): Faults => {
  const found = SCENARIOS.find((s) => s.name === name);
  if (!found) throw new Error(name);
  return found.faults;
};

/** A shorter world for the test suite: the same faults over fewer ticks. */
const short = (name: string, ticks = 40): Faults => {
  const faults = scenario(name);
  return {
    ...faults,
    ticks,
    downtime: faults.downtime.map(([start, length]): [number, number] => [
      Math.min(start, 10),
      Math.min(length, 25),
    ]),
  };
};

describe('the simulation (short run; npm run sim for the full one)', () => {
  it('tidemark loses no update in any scenario, over hundreds of seeds', {
    timeout: 120_000,
  }, async () => {
    const names = SCENARIOS.map((s) => s.name);
    let runs = 0;
    for (const name of names) {
      const seeds = name === 'everything' ? 60 : 30;
      for (let seed = 1; seed <= seeds; seed += 1) {
        const result = await simulate('tidemark', 1_000 + seed, short(name));
        runs += 1;
        if (result.lost > 0) {
          throw new Error(
            `tidemark lost ${result.lost} update(s) in "${name}" with seed ${1_000 + seed}: ${result.lostSample.join(', ')}\n${result.trace.slice(-40).join('\n')}`,
          );
        }
        expect(result.pending, `${name} seed ${1_000 + seed} caught up`).toBe(0);
      }
    }
    expect(runs).toBeGreaterThanOrEqual(300);
  });

  it('shows each naive design losing updates in the scenario built for it', {
    timeout: 60_000,
  }, async () => {
    const lost = async (strategy: Parameters<typeof simulate>[0], name: string) => {
      let total = 0;
      for (let seed = 1; seed <= 5; seed += 1)
        total += (await simulate(strategy, seed, short(name))).lost;
      return total;
    };
    expect(await lost('lookback', 'downtime')).toBeGreaterThan(0);
    expect(await lost('end-time', 'replication-lag')).toBeGreaterThan(0);
    expect(await lost('partial-advance', 'transient-failures')).toBeGreaterThan(0);
    expect(await lost('tidemark', 'downtime')).toBe(0);
    expect(await lost('tidemark', 'replication-lag')).toBe(0);
    expect(await lost('tidemark', 'transient-failures')).toBe(0);
  });

  it('shows a lock TTL of one cron interval letting runs overlap, and tidemark not', {
    timeout: 60_000,
  }, async () => {
    const faults = short('long-runs', 60);
    let shortLease = { concurrent: 0, duplicates: 0 };
    let tidemark = { concurrent: 0, duplicates: 0 };
    for (let seed = 1; seed <= 5; seed += 1) {
      const naive = await simulate('short-lease', seed, faults);
      const ours = await simulate('tidemark', seed, faults);
      shortLease = {
        concurrent: Math.max(shortLease.concurrent, naive.maxConcurrentRuns),
        duplicates: shortLease.duplicates + naive.duplicates,
      };
      tidemark = {
        concurrent: Math.max(tidemark.concurrent, ours.maxConcurrentRuns),
        duplicates: tidemark.duplicates + ours.duplicates,
      };
    }
    expect(shortLease.concurrent).toBeGreaterThan(1);
    expect(shortLease.duplicates).toBeGreaterThan(0);
    expect(tidemark.duplicates).toBe(0);
  });
});
