import { describe, expect, it } from 'vitest';
import {
  MIRROR_SCENARIOS,
  MIRROR_VARIANTS,
  type MirrorResult,
  RECONCILE_EVERY_MS,
  RECONCILE_SLACK_TICKS,
  simulateMirror,
} from '../../sim/mirror.ts';
import type { MirrorFaults } from '../../sim/mirror-world.ts';

/** The mirror scenario over a shorter run: an hour or two of changes, an hour of quiet. */
const faults = (name: string): MirrorFaults => {
  const scenario = MIRROR_SCENARIOS.find((s) => s.name === name);
  if (!scenario) throw new Error(name);
  return { ...scenario.faults, ticks: 60, ticksJitter: 30, drainTicks: 60 };
};

const SEEDS = [1, 2, 3];

async function run(variant: string, scenario = 'mirror'): Promise<MirrorResult[]> {
  const found = MIRROR_VARIANTS.find((v) => v.name === variant);
  if (!found) throw new Error(variant);
  const results: MirrorResult[] = [];
  for (const seed of SEEDS) results.push(await simulateMirror(found, seed, faults(scenario)));
  return results;
}

const sum = (results: MirrorResult[], pick: (result: MirrorResult) => number) =>
  results.reduce((total, result) => total + pick(result), 0);

describe('the simulation: a mirror of an upstream with deletes and silent changes (short run; npm run sim for the full one)', () => {
  it('with reconcile (compare = "content"), the mirror converges within one period of the last change, and nothing is deleted wrongly', {
    timeout: 20_000,
  }, async () => {
    const bound = RECONCILE_EVERY_MS + RECONCILE_SLACK_TICKS * faults('mirror').intervalMs;
    for (const result of await run('reconcile')) {
      const seed = `seed ${result.seed}`;
      expect(result.changes['unlogged-delete'], seed).toBeGreaterThan(0);
      expect(result.changes.silent, seed).toBeGreaterThan(0);
      expect({ ghosts: result.ghosts, stale: result.stale, missing: result.missing }, seed).toEqual(
        { ghosts: 0, stale: 0, missing: 0 },
      );
      expect(result.convergedAfterMs, seed).not.toBeNull();
      expect(result.convergedAfterMs ?? Number.POSITIVE_INFINITY, seed).toBeLessThanOrEqual(bound);
      expect(result.falseDeletes, `${seed}: ${result.falseDeleteSample.join(', ')}`).toBe(0);
    }
  });

  it('a listing that comes back empty once delivers no delete: held, then superseded by the next listing', {
    timeout: 20_000,
  }, async () => {
    for (const result of await run('reconcile-empty-once')) {
      const seed = `seed ${result.seed}`;
      expect(result.held, seed).toBeGreaterThanOrEqual(1);
      expect(result.falseDeletes, `${seed}: ${result.falseDeleteSample.join(', ')}`).toBe(0);
      expect(result.convergedAfterMs, seed).not.toBeNull();
    }
  });

  it('without a listing, ghosts and silent changes stay in the mirror; compared by updated_at only, silent changes do', {
    timeout: 20_000,
  }, async () => {
    const naive = await run('no-listing');
    expect(sum(naive, (r) => r.ghosts)).toBeGreaterThan(0);
    expect(sum(naive, (r) => r.stale)).toBeGreaterThan(0);
    expect(naive.every((r) => r.convergedAfterMs === null && r.wrongSinceAtEnd !== null)).toBe(
      true,
    );
    expect(sum(naive, (r) => r.falseDeletes)).toBe(0);
    const byDate = await run('reconcile-by-updated-at');
    expect(sum(byDate, (r) => r.ghosts)).toBe(0);
    expect(sum(byDate, (r) => r.stale)).toBeGreaterThan(0);
    expect(sum(byDate, (r) => r.falseDeletes)).toBe(0);
  });

  it('with failing pages, failing deliveries and crashes, it still converges and deletes nothing wrongly', {
    timeout: 20_000,
  }, async () => {
    for (const result of await run('reconcile', 'mirror-faults')) {
      const seed = `seed ${result.seed}`;
      expect(result.convergedAfterMs, seed).not.toBeNull();
      expect(result.falseDeletes, `${seed}: ${result.falseDeleteSample.join(', ')}`).toBe(0);
    }
  });

  it('gives the same run for the same seed', { timeout: 20_000 }, async () => {
    const variant = MIRROR_VARIANTS.find((v) => v.name === 'reconcile');
    if (!variant) throw new Error('reconcile');
    const strip = ({ trace: _, ...result }: MirrorResult) => result;
    const first = await simulateMirror(variant, 7, faults('mirror-faults'));
    const second = await simulateMirror(variant, 7, faults('mirror-faults'));
    expect(strip(second)).toEqual(strip(first));
  });
});
