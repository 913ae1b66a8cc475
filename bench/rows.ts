/**
 * What one ordinary run writes, as the platform bills it: two pollers that tick by
 * themselves (`every = "2s"`, the path a cron-scheduled poller takes every minute: its alarm
 * fires, it runs, it books the next tick), one whose upstream has nothing new and one that
 * finds 100 new records on every tick. Rows and alarm writes come from the counters each
 * object persists with its own writes, read between consecutive runs once both pollers are
 * past their first runs. Wall time per run is what Cloudflare bills as duration.
 */
import { type Spread, sleep, spread } from './stats.ts';
import {
  type Bench,
  type BenchRun,
  benchPoller,
  type StorageStats,
  startBench,
} from './workerd.ts';

export interface RunCost {
  /** Rows plus alarm writes per run. */
  writes: Spread;
  rows: Spread;
  alarms: Spread;
  /** Wall time of the run, start to finish, in ms. */
  ms: Spread;
  records: number;
}

export interface RowsPerRun {
  latency: number;
  empty: RunCost;
  hundred: RunCost;
}

const TICK = '2s';

function ticking(feed: string, latency: number) {
  const poller = benchPoller(latency, { every: TICK, start_from: undefined }, { feed });
  return {
    ...poller,
    cron: undefined,
    source: { ...poller.source, url: 'https://upstream.bench/live' },
  };
}

export async function rowsPerRun(runs: number, latency: number): Promise<RowsPerRun> {
  const bench = await startBench(
    { idle: ticking('idle', latency), busy: ticking('busy', latency) },
    0,
  );
  try {
    await Promise.all([bench.schedule('idle'), bench.schedule('busy')]);
    // The first runs store the checkpoint and the poller's name: not an ordinary run.
    await Promise.all([waitForRuns(bench, 'idle', 2), waitForRuns(bench, 'busy', 2)]);
    const [empty, hundred] = await Promise.all([
      measure(bench, 'idle', runs, 0),
      measure(bench, 'busy', runs, 100),
    ]);
    return { latency, empty, hundred };
  } finally {
    await bench.mf.dispose();
  }
}

async function measure(bench: Bench, name: string, runs: number, publish: number) {
  const writes: number[] = [];
  const rows: number[] = [];
  const alarms: number[] = [];
  const ms: number[] = [];
  // In step with the ticks: each round starts as a run ends, and publishes at once.
  let last = await nextRun(bench, name, await latestRun(bench, name));
  let before = await bench.storageStats(name);
  for (let i = 0; i < runs; i += 1) {
    if (publish > 0) await bench.harness(`/publish?feed=${name}&count=${publish}&spread=1000`);
    const run = await nextRun(bench, name, last);
    const after = await bench.storageStats(name);
    if (run.outcome !== 'success' || run.records !== publish) {
      throw new Error(`${name}: an unexpected run: ${JSON.stringify(run)}`);
    }
    rows.push(after.rowsWritten - before.rowsWritten);
    alarms.push(after.alarmWrites - before.alarmWrites);
    writes.push(total(after) - total(before));
    ms.push(run.finishedAt - run.startedAt);
    last = run;
    before = after;
  }
  await bench.pause(name);
  return {
    writes: spread(writes),
    rows: spread(rows),
    alarms: spread(alarms),
    ms: spread(ms),
    records: publish,
  };
}

const total = (stats: StorageStats) => stats.rowsWritten + stats.alarmWrites;

async function latestRun(bench: Bench, name: string): Promise<BenchRun | undefined> {
  return (await bench.runs(name, 1))[0];
}

/** Waits for the run after `last` to finish; the counters then hold what it wrote. */
async function nextRun(bench: Bench, name: string, last: BenchRun | undefined) {
  for (let tries = 0; tries < 1_000; tries += 1) {
    const run = await latestRun(bench, name);
    if (run && run.startedAt !== last?.startedAt) {
      // Its finish is persisted with the counters; let the alarm handler end too.
      await sleep(100);
      return run;
    }
    await sleep(25);
  }
  throw new Error(`${name}: no run came`);
}

async function waitForRuns(bench: Bench, name: string, count: number) {
  let last = await latestRun(bench, name);
  for (let i = 0; i < count; i += 1) last = await nextRun(bench, name, last);
}
