/**
 * One window of 1,000,000 records through one poller, in one run: does it complete, how long
 * does it take, how much does the poller's isolate heap grow (sampled through the V8
 * inspector during the run, against the heap before it), how much does the
 * workerd process grow (resident memory: both isolates and workerd's own buffers), and how
 * many rows does it write.
 *
 *   node --experimental-transform-types bench/million.ts [--records 1000000]
 */
import { parseArgs } from 'node:util';
import { heapOf } from './heap.ts';
import { benchPoller, bundle, memoryMb, resetPeak, startBench } from './workerd.ts';

const round1 = (mb: number) => Math.round(mb * 10) / 10;

export interface MillionWindow {
  records: number;
  ms: number;
  outcome: string;
  /** tidemark's isolate: used heap before the run, its peak during it, and after it. */
  heapBeforeMb: number;
  heapPeakMb: number;
  heapAfterMb: number;
  heapGrowthMb: number;
  rssBeforeMb: number;
  peakMb: number;
  growthMb: number;
  peakReset: boolean;
  /** Rows and alarm writes the object persisted in its counters over the run. */
  rowsWritten: number;
  ledgerRows: number;
  subrequests: number;
}

export async function millionWindow(records = 1_000_000): Promise<MillionWindow> {
  const bench = await startBench({ million: benchPoller(0) }, records, { inspector: true });
  try {
    await bench.harness('/reset');
    const heap = await heapOf('tidemark');
    const heapBefore = await heap.used();
    const peakReset = resetPeak(bench.pid);
    const before = memoryMb(bench.pid);
    const watch = heap.watch();
    const started = performance.now();
    const reply = await bench.run('million');
    const ms = performance.now() - started;
    const heapPeak = await watch.stop();
    const after = memoryMb(bench.pid);
    const heapAfter = await heap.used();
    heap.close();
    const counters = await bench.harness('/counters');
    const stats = await bench.storageStats('million');
    const outcome = reply.run?.outcome ?? reply.outcome;
    if (outcome !== 'success' || counters.records !== records) {
      throw new Error(`the window did not complete: ${JSON.stringify({ reply, counters })}`);
    }
    return {
      records,
      ms: Math.round(ms),
      outcome,
      heapBeforeMb: round1(heapBefore),
      heapPeakMb: round1(heapPeak),
      heapAfterMb: round1(heapAfter),
      heapGrowthMb: round1(heapPeak - heapBefore),
      rssBeforeMb: Math.round(before.rss),
      peakMb: Math.round(after.peak),
      growthMb: Math.round(after.peak - before.rss),
      peakReset,
      rowsWritten: stats.rowsWritten + stats.alarmWrites,
      ledgerRows: stats.ledgerRows,
      subrequests: (counters.pages ?? 0) + (counters.posts ?? 0),
    };
  } finally {
    await bench.mf.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { records: { type: 'string', default: '1000000' } } });
  bundle();
  console.log(JSON.stringify(await millionWindow(Number(values.records)), null, 2));
}
