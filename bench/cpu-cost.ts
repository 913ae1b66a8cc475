/**
 * CPU per delivered record, and what a million records of it cost at the Workers CPU price:
 * the figure the no-latency throughput gap is judged by since its 85% target was retired
 * (the gap is work the bare loop does not do; this says what that work costs).
 */
import { type Spread, spread } from './stats.ts';

/**
 * Workers Standard (Workers Paid): $0.02 per million CPU milliseconds beyond the 30 million
 * a month includes (https://developers.cloudflare.com/workers/platform/pricing/, read
 * 2026-12-03). A Durable Object is billed by wall-clock duration instead, not CPU time.
 */
export const WORKERS_CPU_USD_PER_MILLION_MS = 0.02;

/** One repetition: the CPU time it took and the records the receiver counted. */
export interface CpuAndRecords {
  cpuMs: number;
  records: number;
}

/** µs of CPU per delivered record in each repetition, as median and spread. */
export function cpuPerRecordUs(reps: CpuAndRecords[]): Spread {
  return spread(
    reps.map(({ cpuMs, records }) => {
      // A repetition that delivered nothing has no per-record cost: it is a failed run.
      if (records <= 0) throw new Error('a repetition delivered no record');
      return (cpuMs * 1000) / records;
    }),
  );
}

/** USD of CPU time for 1,000,000 records at `usPerRecord` µs each, at `usdPerMillionMs`. */
export function cpuUsdPerMillionRecords(
  usPerRecord: number,
  usdPerMillionMs = WORKERS_CPU_USD_PER_MILLION_MS,
): number {
  // A million records × usPerRecord µs = usPerRecord × 1,000 ms = usPerRecord / 1,000
  // million ms.
  return (usPerRecord / 1000) * usdPerMillionMs;
}
