/**
 * Catch-up of a backlog by the real Poller Durable Object in workerd, in real time: a steady
 * stream of `perSecond` updates a second for `hours` hours behind the poller's start_from,
 * `max_window = "1h"`, `max_subrequests = 1000`, pages of 100 from an upstream that answers a
 * page in `pageMs`, webhook batches of 100 to a receiver that takes one in `postMs`. One
 * manual trigger; every run after it is a continuation by alarm. The time is from the first
 * run's start to the last run's end, compared with two floors: the upstream's (every page
 * it served, one after the other) and the receiver's (every batch, one after the other).
 */
import { type Spread, sleep, spread } from './stats.ts';
import { type Bench, type BenchRun, benchPoller, startBench } from './workerd.ts';

export interface CatchUpRep {
  seconds: number;
  runs: number;
  pages: number;
  batches: number;
  records: number;
  /** Rows and alarm writes of the whole catch-up, from the object's counters. */
  rowsWritten: number;
  upstreamFloorSeconds: number;
  receiverFloorSeconds: number;
  /** Time over the larger of the two floors. */
  ratio: number;
}

export interface CatchUp {
  hours: number;
  perSecond: number;
  pageMs: number;
  postMs: number;
  records: number;
  reps: CatchUpRep[];
  seconds: Spread;
  ratio: Spread;
  runs: Spread;
}

export async function catchUp(
  hours: number,
  reps: number,
  perSecond = 10,
  pageMs = 100,
  postMs = 50,
): Promise<CatchUp> {
  const step = 1000 / perSecond;
  const count = Math.round(hours * 3_600 * perSecond);
  // The backlog ends a minute before the bench starts: the last window is the empty tail.
  const start = Math.floor(Date.now() / 1000) * 1000 - hours * 3_600_000 - 60_000;
  const pollers: Record<string, unknown> = {};
  for (let rep = 1; rep <= reps; rep += 1) {
    const poller = benchPoller(
      pageMs,
      { start_from: new Date(start).toISOString(), max_window: '1h', max_subrequests: 1000 },
      { start: String(start), step: String(step), count: String(count) },
    );
    pollers[`catchup_${rep}`] = {
      ...poller,
      source: {
        ...poller.source,
        url: 'https://upstream.bench/stream',
        to_param: 'to',
        sorted: undefined,
      },
      deliver: { ...poller.deliver, url: `https://receiver.bench/hook?latency=${postMs}` },
    };
  }
  const bench = await startBench(pollers, 0);
  try {
    const done: CatchUpRep[] = [];
    for (let rep = 1; rep <= reps; rep += 1) {
      const name = `catchup_${rep}`;
      await bench.harness('/reset');
      await bench.trigger(name, 'manual');
      const runs = await untilCaughtUp(bench, name, count);
      const counters = await bench.harness('/counters');
      const stats = await bench.storageStats(name);
      const first = runs.at(-1);
      const last = runs[0];
      if (!first || !last) throw new Error('no runs');
      const seconds = (last.finishedAt - first.startedAt) / 1000;
      const upstreamFloorSeconds = ((counters.pages ?? 0) * pageMs) / 1000;
      const receiverFloorSeconds = ((counters.posts ?? 0) * postMs) / 1000;
      done.push({
        seconds,
        runs: runs.length,
        pages: counters.pages ?? 0,
        batches: counters.posts ?? 0,
        records: counters.records ?? 0,
        rowsWritten: stats.rowsWritten + stats.alarmWrites,
        upstreamFloorSeconds,
        receiverFloorSeconds,
        ratio: seconds / Math.max(upstreamFloorSeconds, receiverFloorSeconds),
      });
      console.error(`catch-up rep ${rep}: ${seconds.toFixed(1)} s in ${runs.length} runs`);
    }
    return {
      hours,
      perSecond,
      pageMs,
      postMs,
      records: count,
      reps: done,
      seconds: spread(done.map((rep) => rep.seconds)),
      ratio: spread(done.map((rep) => rep.ratio)),
      runs: spread(done.map((rep) => rep.runs)),
    };
  } finally {
    await bench.mf.dispose();
  }
}

/** Waits until every record was delivered and the last run succeeded; its runs, newest first. */
async function untilCaughtUp(bench: Bench, name: string, count: number): Promise<BenchRun[]> {
  for (;;) {
    await sleep(250);
    const counters = await bench.harness('/counters');
    if ((counters.records ?? 0) < count) continue;
    const runs = await bench.runs(name, 100);
    const latest = runs[0];
    if (latest?.outcome === 'success') return runs;
    if (latest && latest.outcome !== 'continued') {
      throw new Error(`${name}: a run ended ${latest.outcome}: ${JSON.stringify(latest)}`);
    }
  }
}
