/**
 * `npm run bench`: throughput and cost of tidemark against a bare loop, inside workerd
 * (Miniflare), with an in-process upstream and receiver (bench/harness.js, reached through
 * service bindings). Not a test: it measures and writes docs/benchmarks.md.
 *
 *   npm run bench                      # N = 100,000 records in pages of 100
 *   npm run bench -- --records 20000   # a quicker run
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { writeFormatted } from '../sim/write-formatted.ts';
import { catchUp } from './catch-up.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    latency: { type: 'string', default: '20' },
    out: { type: 'string', default: 'docs/benchmarks.md' },
    'no-write': { type: 'boolean', default: false },
  },
});
const N = Number(values.records);
const ADMIN = 'bench-admin-token';
const BASE = Date.parse('2026-01-01T00:00:00Z');

const build = spawnSync(
  'node_modules/.bin/wrangler',
  ['deploy', '--dry-run', '--outdir', 'dist/bench'],
  {
    stdio: ['ignore', 'ignore', 'inherit'],
  },
);
if (build.status !== 0) throw new Error('wrangler could not bundle the Worker');

const poller = (latency: number) => ({
  cron: '* * * * *',
  start_from: new Date(BASE).toISOString(),
  lease_ttl: '20m',
  max_run: '14m',
  max_subrequests: 100_000,
  source: {
    url: 'https://upstream.bench/items',
    service: 'UPSTREAM',
    from_param: 'from',
    items: 'items',
    sorted: 'asc',
    params: { limit: '100', latency: String(latency) },
    next: { type: 'cursor', param: 'cursor', path: 'next' },
  },
  deliver: {
    type: 'webhook',
    url: `https://receiver.bench/hook?latency=${latency}`,
    secret: '${WEBHOOK_SECRET}',
    batch: 100,
  },
});
const LATENCY_MS = Number(values.latency);
const pollers = { bench: poller(0), bench_latency: poller(LATENCY_MS) };

const mf = new Miniflare(
  // The classic (v4) option shape, converted to Miniflare 5's.
  convertV4MiniflareOptions({
    workers: [
      {
        name: 'tidemark',
        modules: true,
        scriptPath: 'dist/bench/index.js',
        compatibilityDate: '2026-11-01',
        bindings: {
          POLLERS: JSON.stringify(pollers),
          ADMIN_TOKEN: ADMIN,
          WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        },
        durableObjects: {
          POLLER: { className: 'Poller', useSQLite: true },
          DEMO_UPSTREAM: { className: 'DemoUpstream', useSQLite: true },
        },
        d1Databases: ['DB'],
        serviceBindings: { UPSTREAM: 'harness', SELF: 'tidemark' },
        // The webhook's fetch() leaves through the harness: the in-process receiver.
        outboundService: 'harness',
      },
      {
        name: 'harness',
        modules: true,
        scriptPath: 'bench/harness.js',
        compatibilityDate: '2026-11-01',
        bindings: { BENCH_RECORDS: String(N) },
        serviceBindings: { UPSTREAM: 'harness', RECEIVER: 'harness' },
      },
    ],
  }),
);

async function harness(path: string) {
  const response = await mf.dispatchFetch(`https://harness.bench${path}`, {
    headers: { 'mf-route': 'harness' },
  });
  return response.json() as Promise<Record<string, number>>;
}

/** Peak resident memory of the workerd processes (VmHWM), in MB. */
function workerdPeakMb(): number {
  const pids = execFileSync('pgrep', ['-f', 'workerd serve'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .filter(Boolean);
  let peak = 0;
  for (const pid of pids) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
      peak = Math.max(peak, kb / 1024);
    } catch {
      // gone
    }
  }
  return peak;
}

await mf.ready;
// Warm-up: the first requests load the modules.
await harness('/counters');

const harnessWorker = await mf.getWorker('harness');
const tidemark = await mf.getWorker('tidemark');
const namespace = await mf.getDurableObjectNamespace('POLLER', 'tidemark');
const json = async (response: Promise<Response>) => JSON.parse(await (await response).text());

/** One workload through the bare loop, then through a tidemark poller, in the same workerd. */
async function measure(name: string, latency: number) {
  await harnessWorker.fetch('https://harness.bench/reset');
  const baselineStart = performance.now();
  const baseline = await json(
    harnessWorker.fetch(`https://harness.bench/baseline?latency=${latency}`),
  );
  const baselineMs = performance.now() - baselineStart;
  const baselineCounters = await json(harnessWorker.fetch('https://harness.bench/counters'));
  await harnessWorker.fetch('https://harness.bench/reset');
  const runStart = performance.now();
  const reply = await json(
    tidemark.fetch(`https://tidemark.bench/pollers/${name}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}` },
    }),
  );
  const runMs = performance.now() - runStart;
  const counters = await json(harnessWorker.fetch('https://harness.bench/counters'));
  const stub = namespace.get(namespace.idFromName(name)) as unknown as {
    storageStats(): Promise<{ rowsWritten: number; ledgerRows: number }>;
  };
  const stats = JSON.parse(JSON.stringify(await stub.storageStats())) as { rowsWritten: number };
  if (reply.outcome !== 'success' || counters.records !== N || baseline.records !== N) {
    throw new Error(
      `a run did not deliver every record: ${JSON.stringify({ reply, counters, baseline })}`,
    );
  }
  const perSecond = (count: number, ms: number) => Math.round((count / ms) * 1000);
  return {
    latency,
    tidemarkMs: Math.round(runMs),
    baselineMs: Math.round(baselineMs),
    tidemarkRecordsPerSecond: perSecond(N, runMs),
    baselineRecordsPerSecond: perSecond(N, baselineMs),
    tidemarkPagesPerSecond: perSecond(counters.pages, runMs),
    ratio: baselineMs / runMs,
    rowsPer1000: (stats.rowsWritten / N) * 1000,
    subrequestsPer1000: ((counters.pages + counters.posts) / N) * 1000,
    baselineSubrequestsPer1000: ((baselineCounters.pages + baselineCounters.posts) / N) * 1000,
  };
}

const cpu = await measure('bench', 0);
const withLatency = await measure('bench_latency', LATENCY_MS);
const peakMb = workerdPeakMb();
await mf.dispose();
// Catch-up of a 7-day backlog at 10 updates/s, max_window 1h, in virtual time (the engine
// against an upstream answering a page in 100 ms and a receiver taking a batch in 50 ms).
const backlog = await catchUp(7, 10, 100, 50);
const figures = { records: N, cpu, withLatency, peakMb, backlog };
console.log(JSON.stringify(figures, null, 2));
const row = (label: string, pick: (m: typeof cpu) => string) =>
  `| ${label} | ${pick(cpu)} | ${pick(withLatency)} |`;
const markdown = `# Benchmarks

Produced by \`npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\` on ${new Date().toISOString().slice(0, 10)},
in workerd (Miniflare) on this machine (2 cores). One poller reads ${N.toLocaleString('en')} records from an
in-process upstream in pages of 100 and delivers them as signed webhooks in batches of 100 to an
in-process receiver (\`bench/harness.js\`, reached through a service binding and \`outboundService\`),
in one manual run. The bare loop runs in the same workerd: fetch a page, POST its records, no
lease, no checkpoint, no ledger, no signature. Run twice: with no latency at all (pure CPU cost,
the worst case for tidemark's overhead), and with ${LATENCY_MS} ms per upstream and receiver call
(closer to real APIs).

| | no latency | ${LATENCY_MS} ms per call |
|---|---:|---:|
${row('tidemark wall time', (m) => `${m.tidemarkMs.toLocaleString('en')} ms`)}
${row('bare loop wall time', (m) => `${m.baselineMs.toLocaleString('en')} ms`)}
${row('tidemark records/s', (m) => m.tidemarkRecordsPerSecond.toLocaleString('en'))}
${row('bare loop records/s', (m) => m.baselineRecordsPerSecond.toLocaleString('en'))}
${row('tidemark pages/s', (m) => m.tidemarkPagesPerSecond.toLocaleString('en'))}
${row('**throughput vs the bare loop**', (m) => `**${(m.ratio * 100).toFixed(0)}%**`)}
${row('DO rows written per 1,000 records', (m) => m.rowsPer1000.toFixed(2))}
${row('subrequests per 1,000 records (tidemark / bare loop)', (m) => `${m.subrequestsPer1000.toFixed(1)} / ${m.baselineSubrequestsPer1000.toFixed(1)}`)}

Peak memory of the workerd process over both runs: ${peakMb.toFixed(0)} MB (VmHWM).

## Catch-up of a 7-day backlog

${backlog.records.toLocaleString('en')} updates (10/s for ${backlog.days} days), \`max_window = "1h"\`,
\`max_subrequests = 1000\`, pages of 100, webhook batches of 100; the real engine in virtual
time against an upstream that answers a page in 100 ms and a receiver that takes a batch in
50 ms (\`bench/catch-up.ts\`). It took ${backlog.runs} runs chained by continuation alarms (no
cron tick), ${backlog.pages.toLocaleString('en')} pages and ${backlog.batches.toLocaleString('en')} batches:
**${(backlog.virtualSeconds / 3600).toFixed(2)} h**, against a floor of ${(backlog.floorSeconds / 3600).toFixed(2)} h
that the upstream's and receiver's latency alone impose (every page and batch one after the
other). Catch-up is limited by upstream latency, not by tidemark.

Targets: throughput ≥ 90% of the bare loop; ≤ 0.05 DO rows written per record (50 per 1,000)
at batch 100; subrequests per record ≤ 1/batch + 1/page size (20 per 1,000).
`;
if (!values['no-write']) {
  mkdirSync('docs', { recursive: true });
  writeFormatted(values.out, markdown);
  console.log(`wrote ${values.out}`);
}
