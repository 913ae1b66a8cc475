/**
 * Throughput of one tidemark poller against the bare loop (bench/bare-loop.js), side by side
 * in one workerd: after a warm-up of both, `reps` repetitions, the order alternating (bare
 * loop first in odd ones, tidemark first in even ones), each tidemark repetition a fresh
 * poller over the same records. The ratio is taken within each repetition.
 *
 * The timed repetitions run with no V8 inspector attached: one slows every isolate down, and
 * unevenly (the same bare loop took from 0.8 to 1.5 s with one). tidemark's heap during a
 * run is read afterwards, in `heapRuns` runs of a workerd that has the inspector.
 */
import { cpuPerRecordUs } from './cpu-cost.ts';
import { heapOf } from './heap.ts';
import { type Spread, spread } from './stats.ts';
import { benchPoller, startBench } from './workerd.ts';
import { cpuMs } from './workerd-process.ts';

export interface ThroughputRep {
  first: 'bare loop' | 'tidemark';
  tidemarkMs: number;
  bareMs: number;
  /** The bare loop's time over tidemark's: above 1, tidemark is faster. */
  ratio: number;
  /** CPU time of the workerd process (every isolate: upstream and receiver too) in each run. */
  tidemarkCpuMs: number;
  bareCpuMs: number;
  /** The bare loop's CPU time over tidemark's: steadier than wall time on a shared machine. */
  cpuRatio: number;
  /** Records the receiver counted in tidemark's run (all of them, or the repetition fails). */
  delivered: number;
  bareDelivered: number;
  subrequests: number;
  bareSubrequests: number;
  /** Rows and alarm writes the run's object persisted in its counters. */
  rowsWritten: number;
}

export interface Throughput {
  latency: number;
  records: number;
  reps: ThroughputRep[];
  ratio: Spread;
  tidemarkMs: Spread;
  bareMs: Spread;
  cpuRatio: Spread;
  /** The workerd process's CPU per delivered record, in µs, in tidemark's runs and the bare loop's. */
  cpuPerRecordUs: Spread;
  bareCpuPerRecordUs: Spread;
  heapPeakMb: Spread;
  heapBeforeMb: number;
}

/** The warm-up runs over this many records, for both. */
const WARM_UP = 10_000;

/** Each latency, with how many repetitions it gets. */
export async function throughput(
  records: number,
  plan: { latency: number; reps: number }[],
  heapRuns = 3,
): Promise<Throughput[]> {
  const timed = await timedReps(records, plan);
  const heaps = await heapDuringRuns(records, plan, heapRuns);
  return timed.map((result, i) => ({ ...result, ...(heaps[i] as HeapFigures) }));
}

interface HeapFigures {
  heapPeakMb: Spread;
  heapBeforeMb: number;
}

async function timedReps(
  records: number,
  plan: { latency: number; reps: number }[],
): Promise<Omit<Throughput, keyof HeapFigures>[]> {
  const pollers: Record<string, unknown> = {};
  for (const { latency, reps } of plan) {
    pollers[`warm_${latency}`] = benchPoller(latency, {}, { total: String(WARM_UP) });
    for (let rep = 1; rep <= reps; rep += 1) pollers[`t_${latency}_${rep}`] = benchPoller(latency);
  }
  const bench = await startBench(pollers, records);
  try {
    const results: Omit<Throughput, keyof HeapFigures>[] = [];
    for (const { latency, reps } of plan) {
      // Warm-up: both load and JIT-compile their code before anything is timed.
      await bench.bareLoop(latency, WARM_UP);
      const warm = await bench.run(`warm_${latency}`);
      if ((warm.run?.outcome ?? warm.outcome) !== 'success') {
        throw new Error(`the warm-up run failed: ${JSON.stringify(warm)}`);
      }
      const done: ThroughputRep[] = [];
      for (let rep = 1; rep <= reps; rep += 1) {
        const first = rep % 2 === 1 ? 'bare loop' : 'tidemark';
        const bareRun = async () => {
          await bench.harness('/reset');
          const cpuBefore = cpuMs(bench.pid);
          const started = performance.now();
          const reply = await bench.bareLoop(latency);
          const ms = performance.now() - started;
          const cpu = cpuMs(bench.pid) - cpuBefore;
          const counters = await bench.harness('/counters');
          if (reply.records !== records || counters.records !== records) {
            throw new Error(`the bare loop did not deliver every record: ${JSON.stringify(reply)}`);
          }
          return {
            ms,
            cpu,
            delivered: counters.records ?? 0,
            subrequests: (counters.pages ?? 0) + (counters.posts ?? 0),
          };
        };
        const tidemarkRun = async () => {
          const name = `t_${latency}_${rep}`;
          await bench.harness('/reset');
          const cpuBefore = cpuMs(bench.pid);
          const started = performance.now();
          const reply = await bench.run(name);
          const ms = performance.now() - started;
          const cpu = cpuMs(bench.pid) - cpuBefore;
          const counters = await bench.harness('/counters');
          const outcome = reply.run?.outcome ?? reply.outcome;
          if (outcome !== 'success' || counters.records !== records) {
            throw new Error(`a run did not deliver every record: ${JSON.stringify(reply)}`);
          }
          const stats = await bench.storageStats(name);
          return {
            ms,
            cpu,
            delivered: counters.records ?? 0,
            subrequests: (counters.pages ?? 0) + (counters.posts ?? 0),
            rowsWritten: stats.rowsWritten + stats.alarmWrites,
          };
        };
        const bare = first === 'bare loop' ? await bareRun() : undefined;
        const ours = await tidemarkRun();
        const bareAfter = bare ?? (await bareRun());
        done.push({
          first,
          tidemarkMs: Math.round(ours.ms),
          bareMs: Math.round(bareAfter.ms),
          ratio: bareAfter.ms / ours.ms,
          tidemarkCpuMs: ours.cpu,
          bareCpuMs: bareAfter.cpu,
          cpuRatio: bareAfter.cpu / ours.cpu,
          delivered: ours.delivered,
          bareDelivered: bareAfter.delivered,
          subrequests: ours.subrequests,
          bareSubrequests: bareAfter.subrequests,
          rowsWritten: ours.rowsWritten,
        });
        console.error(
          `throughput ${latency} ms, rep ${rep} (${first} first): tidemark ${Math.round(ours.ms)} ms (CPU ${ours.cpu} ms), bare loop ${Math.round(bareAfter.ms)} ms (CPU ${bareAfter.cpu} ms)`,
        );
      }
      results.push({
        latency,
        records,
        reps: done,
        ratio: spread(done.map((rep) => rep.ratio)),
        tidemarkMs: spread(done.map((rep) => rep.tidemarkMs)),
        bareMs: spread(done.map((rep) => rep.bareMs)),
        cpuRatio: spread(done.map((rep) => rep.cpuRatio)),
        cpuPerRecordUs: cpuPerRecordUs(
          done.map((rep) => ({ cpuMs: rep.tidemarkCpuMs, records: rep.delivered })),
        ),
        bareCpuPerRecordUs: cpuPerRecordUs(
          done.map((rep) => ({ cpuMs: rep.bareCpuMs, records: rep.bareDelivered })),
        ),
      });
    }
    return results;
  } finally {
    await bench.mf.dispose();
  }
}

/** tidemark's heap before a run and at its peak during it, `runs` runs per latency. */
async function heapDuringRuns(
  records: number,
  plan: { latency: number }[],
  runs: number,
): Promise<HeapFigures[]> {
  const pollers: Record<string, unknown> = {};
  for (const { latency } of plan) {
    pollers[`warm_${latency}`] = benchPoller(latency, {}, { total: String(WARM_UP) });
    for (let run = 1; run <= runs; run += 1) pollers[`h_${latency}_${run}`] = benchPoller(latency);
  }
  const bench = await startBench(pollers, records, { inspector: true });
  const heap = await heapOf('tidemark');
  try {
    const figures: HeapFigures[] = [];
    for (const { latency } of plan) {
      await bench.run(`warm_${latency}`);
      const heapBeforeMb = await heap.used();
      const peaks: number[] = [];
      for (let run = 1; run <= runs; run += 1) {
        const watch = heap.watch();
        const reply = await bench.run(`h_${latency}_${run}`);
        peaks.push(await watch.stop());
        if ((reply.run?.outcome ?? reply.outcome) !== 'success') {
          throw new Error(`a run did not deliver every record: ${JSON.stringify(reply)}`);
        }
      }
      figures.push({ heapPeakMb: spread(peaks), heapBeforeMb });
    }
    return figures;
  } finally {
    heap.close();
    await bench.mf.dispose();
  }
}
