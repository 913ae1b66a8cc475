/**
 * CPU profiles of the bench's isolates (tidemark, the harness, the bare loop) during one run
 * of tidemark and one of the bare loop over the bench upstream with no latency: where a
 * record's CPU time goes. Writes one .cpuprofile per isolate and run (Chrome DevTools, or
 * speedscope) and prints each isolate's busy time and tidemark's hottest functions.
 *
 *   node --experimental-transform-types bench/profile.ts [--records 100000] [--out /tmp/profile]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { inspect } from './inspector.ts';
import { benchPoller, bundle, startBench } from './workerd.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    out: { type: 'string', default: 'profile' },
  },
});

/** The V8 Profiler of one isolate, through workerd's inspector. */
async function profiler(isolate: string) {
  const { send, close } = await inspect(isolate);
  await send('Profiler.enable');
  await send('Profiler.setSamplingInterval', { interval: 100 });
  return {
    start: () => send('Profiler.start'),
    stop: async () => ((await send('Profiler.stop')) as { profile: Profile }).profile,
    close,
  };
}

/** Milliseconds the isolate was running code (every sample but idle ones). */
function busyMs(profile: Profile): number {
  const idle = new Set(
    profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id),
  );
  let busy = 0;
  profile.samples.forEach((sample, i) => {
    if (!idle.has(sample)) busy += profile.timeDeltas[i + 1] ?? 0;
  });
  return busy / 1000;
}

function hottest(profile: Profile, count: number): string[] {
  const self = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (node.callFrame.functionName === '(idle)') continue;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${url.split('/').at(-1) ?? ''}:${lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + hits);
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, hits]) => `${((hits / total) * 100).toFixed(1).padStart(5)}%  ${name}`);
}

// Unminified: the profile names tidemark's functions (a minified bundle calls them eU, rT).
bundle({ minify: false });
const records = Number(values.records);
const bench = await startBench(
  { warm: benchPoller(0, {}, { total: '10000' }), profiled: benchPoller(0) },
  records,
  { inspector: true },
);
mkdirSync(values.out, { recursive: true });
try {
  await bench.run('warm');
  await bench.bareLoop(0, 10_000);
  const isolates = ['tidemark', 'harness', 'bare'];
  const profilers = await Promise.all(isolates.map(profiler));
  for (const [label, work] of [
    ['tidemark', () => bench.run('profiled')],
    ['bare loop', () => bench.bareLoop(0)],
  ] as const) {
    await Promise.all(profilers.map((p) => p.start()));
    const started = performance.now();
    await work();
    const ms = performance.now() - started;
    const profiles = await Promise.all(profilers.map((p) => p.stop()));
    console.log(`${label}: ${records} records in ${Math.round(ms)} ms; busy per isolate:`);
    profiles.forEach((profile, i) => {
      const name = isolates[i] ?? '';
      writeFileSync(
        `${values.out}/${label.replace(' ', '-')}.${name}.cpuprofile`,
        JSON.stringify(profile),
      );
      console.log(`  ${name}: ${Math.round(busyMs(profile))} ms`);
    });
    if (label === 'tidemark') console.log(hottest(profiles[0] as Profile, 30).join('\n'));
  }
  for (const p of profilers) p.close();
} finally {
  await bench.mf.dispose();
}
