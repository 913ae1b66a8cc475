import { describe, expect, it } from 'vitest';
import {
  cpuPerRecordUs,
  cpuUsdPerMillionRecords,
  WORKERS_CPU_USD_PER_MILLION_MS,
} from '../../bench/cpu-cost.ts';
import { startupActiveMs } from '../../bench/startup-profile.ts';
import { medianMeets, spread } from '../../bench/stats.ts';

describe('CPU per delivered record', () => {
  it("is each repetition's CPU time over the records it delivered, in µs, as median and spread", () => {
    const perRecord = cpuPerRecordUs([
      { cpuMs: 1930, records: 100_000 },
      { cpuMs: 2520, records: 100_000 },
      { cpuMs: 830, records: 50_000 },
    ]);
    expect(perRecord.samples).toEqual([19.3, 25.2, 16.6]);
    expect([perRecord.min, perRecord.median, perRecord.max]).toEqual([16.6, 19.3, 25.2]);
  });

  it('is refused for a repetition that delivered nothing, rather than reported as infinite', () => {
    expect(() => cpuPerRecordUs([{ cpuMs: 100, records: 0 }])).toThrow(/no record/);
  });

  it('costs a million records at 20 µs each $0.0004 at the Workers price of $0.02 per million CPU ms', () => {
    // 1,000,000 × 20 µs = 20,000 ms = 0.02 million ms, × $0.02.
    expect(WORKERS_CPU_USD_PER_MILLION_MS).toBe(0.02);
    expect(cpuUsdPerMillionRecords(20)).toBeCloseTo(0.0004, 10);
    expect(cpuUsdPerMillionRecords(20, 1)).toBeCloseTo(0.02, 10);
  });
});

describe('a guard on the median', () => {
  it('holds while single repetitions fall below it, and fails once the median does', () => {
    expect(medianMeets(spread([0.37, 0.54, 0.74]), (r) => r >= 0.5)).toBe('yes');
    expect(medianMeets(spread([0.37, 0.48, 0.74]), (r) => r >= 0.5)).toBe('no');
  });
});

describe("the Worker's startup from wrangler's profile", () => {
  it('is the sampled time less the idle samples, garbage collection included, in ms', () => {
    const profile = {
      nodes: [
        { id: 1, callFrame: { functionName: '(root)' } },
        { id: 2, callFrame: { functionName: '(idle)' } },
        { id: 3, callFrame: { functionName: 'evaluate' } },
        { id: 4, callFrame: { functionName: '(garbage collector)' } },
      ],
      samples: [2, 3, 3, 4, 2],
      timeDeltas: [10_000, 1_500, 2_500, 1_000, 30_000],
    };
    expect(startupActiveMs(profile)).toBe(5);
  });

  it('is nothing for a profile with no samples', () => {
    expect(startupActiveMs({ nodes: [] })).toBe(0);
  });
});
