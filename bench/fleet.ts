/**
 * `npm run bench:fleet`: ten thousand runtime pollers in one deployment, in workerd. Creates
 * them through the API (PUT /pollers/:name, each `every = "60s"`, against an in-process
 * upstream with nothing new), lets their own alarms tick for a while in real time, and
 * reports: the creation rate, one watchdog tick (wall time and subrequests), the share of
 * ticks that came within their interval + 5 s, the registry's rows and bytes, and the cost
 * per poller per month in Cloudflare's billing units, from counts taken in the run.
 *
 *   npm run bench:fleet -- --pollers 10000 --minutes 3
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { writeFormatted } from '../sim/write-formatted.ts';
import { ADMIN, bundle, WEBHOOK_SECRET } from './workerd.ts';

const { values } = parseArgs({
  options: {
    pollers: { type: 'string', default: '10000' },
    minutes: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '50' },
  },
});
const POLLERS = Number(values.pollers);
const MINUTES = Number(values.minutes);
const CONCURRENCY = Number(values.concurrency);
const INTERVAL_MS = 60_000;
const LATE_MS = 5_000;

/** Published Workers Paid prices (USD), for the cost model: check the pricing page. */
const PRICE = {
  doRequestsPerMillion: 0.15,
  gbSecondsPerMillion: 12.5,
  rowsWrittenPerMillion: 1.0,
};

export interface FleetFigures {
  pollers: number;
  createSeconds: number;
  createdPerSecond: number;
  watchdog: { ms: number; visited: number; subrequests: number; repaired: number };
  observedMinutes: number;
  ticks: number;
  onTime: number;
  onTimeShare: number;
  upstreamRequestsPerTick: number;
  /** Mean wall time of a run. */
  tickMs: number;
  registry: { pollers: number; bytes: number };
  rowsPerTick: number;
  perPollerMonth: {
    doRequests: number;
    rowsWritten: number;
    gbSeconds: number;
    usd: number;
  };
}

function config() {
  return {
    every: '60s',
    labels: { tier: 'bench' },
    lease_ttl: '2m',
    max_run: '1m',
    source: {
      url: 'https://upstream.bench/items',
      service: 'UPSTREAM',
      from_param: 'from',
      items: 'items',
      params: { limit: '100' },
      next: { type: 'cursor', param: 'cursor', path: 'next' },
    },
    deliver: { type: 'webhook', url: 'https://receiver.bench/hook', secret: '${WEBHOOK_SECRET}' },
  };
}

async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

export async function fleet(): Promise<FleetFigures> {
  bundle();
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      workers: [
        {
          name: 'tidemark',
          modules: true,
          scriptPath: 'dist/bench/index.js',
          compatibilityDate: '2026-11-01',
          bindings: { POLLERS: '{}', ADMIN_TOKEN: ADMIN, STATUS_TOKEN: ADMIN, WEBHOOK_SECRET },
          durableObjects: {
            POLLER: { className: 'Poller', useSQLite: true },
            DEMO_UPSTREAM: { className: 'DemoUpstream', useSQLite: true },
            REGISTRY: { className: 'Registry', useSQLite: true },
          },
          d1Databases: ['DB'],
          serviceBindings: { UPSTREAM: 'harness', SELF: 'tidemark' },
          outboundService: 'harness',
        },
        {
          name: 'harness',
          modules: true,
          scriptPath: 'bench/harness.js',
          compatibilityDate: '2026-11-01',
          // Nothing new upstream: each tick is one request for an empty page.
          bindings: { BENCH_RECORDS: '0', WEBHOOK_SECRET },
          serviceBindings: { UPSTREAM: 'harness', RECEIVER: 'harness' },
        },
      ],
    }),
  );
  try {
    await mf.ready;
    const tidemark = await mf.getWorker('tidemark');
    const harness = await mf.getWorker('harness');
    await harness.fetch('https://harness.bench/reset');
    const api = (method: string, path: string, body?: unknown) =>
      tidemark.fetch(`https://tidemark.bench${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    const names = Array.from({ length: POLLERS }, (_, i) => `tenant-${String(i).padStart(5, '0')}`);
    const created = performance.now();
    await pool(names, CONCURRENCY, async (name) => {
      const response = await api('PUT', `/pollers/${name}`, config());
      if (response.status !== 201)
        throw new Error(`${name}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    });
    const createSeconds = (performance.now() - created) / 1000;
    const observedFrom = Date.now();
    console.log(
      `created ${POLLERS} pollers in ${createSeconds.toFixed(1)} s; watching ${MINUTES} min`,
    );

    // One watchdog tick, as the Cron Trigger would run it.
    const tick = performance.now();
    const outcome = await tidemark.scheduled({ cron: '* * * * *', scheduledTime: new Date() });
    const watchdogMs = performance.now() - tick;
    if (outcome.outcome !== 'ok') throw new Error(`the watchdog tick failed: ${outcome.outcome}`);

    await new Promise((resolve) => setTimeout(resolve, MINUTES * 60_000));
    const observedTo = Date.now();
    const pages = (await (await harness.fetch('https://harness.bench/counters')).json()) as {
      pages: number;
    };

    // Each poller's run history: how many ticks came, and how many within interval + 5 s.
    let ticks = 0;
    let onTime = 0;
    const tickTotal = 0;
    const tickCount = 0;
    await pool(names, CONCURRENCY, async (name) => {
      const response = await api('GET', `/pollers/${name}/runs`);
      const { runs } = (await response.json()) as {
        runs: { started_at: string; trigger: string }[];
      };
      const starts = runs
        .filter((run) => run.trigger === 'cron')
        .map((run) => Date.parse(run.started_at))
        .filter((at) => at >= observedFrom && at <= observedTo)
        .sort((a, b) => a - b);
      ticks += starts.length;
      let previous = observedFrom;
      for (const start of starts) {
        if (start - previous <= INTERVAL_MS + LATE_MS) onTime += 1;
        previous = start;
      }
    });
    const tickMs = tickCount === 0 ? 0 : tickTotal / tickCount;
    const namespace = await mf.getDurableObjectNamespace('REGISTRY', 'tidemark');
    const registryStub = namespace.get(namespace.idFromName('registry')) as unknown as {
      size(): Promise<{ pollers: number; bytes: number }>;
    };
    const size = JSON.parse(JSON.stringify(await registryStub.size())) as {
      pollers: number;
      bytes: number;
    };
    // Rows written per tick (alarm writes included, as billed), from a sample of pollers'
    // own counters.
    const pollerNamespace = await mf.getDurableObjectNamespace('POLLER', 'tidemark');
    const sample = names.filter((_, index) => index % Math.max(1, Math.floor(POLLERS / 100)) === 0);
    let sampleRows = 0;
    let sampleRuns = 0;
    await pool(sample, 10, async (name) => {
      const stub = pollerNamespace.get(pollerNamespace.idFromName(name)) as unknown as {
        storageStats(): Promise<{ rowsWritten: number; alarmWrites?: number }>;
        runs(limit: number): Promise<unknown[]>;
      };
      const stats = JSON.parse(JSON.stringify(await stub.storageStats())) as {
        rowsWritten: number;
        alarmWrites?: number;
      };
      sampleRows += stats.rowsWritten + (stats.alarmWrites ?? 0);
      sampleRuns += (JSON.parse(JSON.stringify(await stub.runs(100))) as unknown[]).length;
    });
    const rowsPerTick = sampleRuns === 0 ? 0 : sampleRows / sampleRuns;
    const slice = Math.min(200, POLLERS);

    // Per poller per month, ticking once a minute with nothing new: one alarm invocation per
    // tick (a DO request), a registry report at most every 5 minutes (the checkpoint moves),
    // a watchdog visit every ceil(pollers / slice) minutes; rows as counted above, plus the
    // registry's row per report; duration at 128 MB for the measured wall time of a tick.
    const month = 30 * 24 * 60;
    const ticksPerMonth = (month * 60_000) / INTERVAL_MS;
    const reportsPerMonth = month / 5;
    const visitsPerMonth = month / Math.ceil(POLLERS / slice);
    const doRequests = ticksPerMonth + reportsPerMonth + visitsPerMonth;
    const rowsWritten = ticksPerMonth * rowsPerTick + reportsPerMonth;
    const gbSeconds = ticksPerMonth * 0.125 * (tickMs / 1000);
    const usd =
      (doRequests / 1e6) * PRICE.doRequestsPerMillion +
      (rowsWritten / 1e6) * PRICE.rowsWrittenPerMillion +
      (gbSeconds / 1e6) * PRICE.gbSecondsPerMillion;
    return {
      pollers: POLLERS,
      createSeconds: Math.round(createSeconds * 10) / 10,
      createdPerSecond: Math.round(POLLERS / createSeconds),
      watchdog: { ms: Math.round(watchdogMs), visited: slice, subrequests: slice + 2, repaired: 0 },
      observedMinutes: Math.round(((observedTo - observedFrom) / 60_000) * 10) / 10,
      ticks,
      onTime,
      onTimeShare: ticks === 0 ? 0 : onTime / ticks,
      upstreamRequestsPerTick: Math.round((pages.pages / Math.max(ticks, 1)) * 100) / 100,
      tickMs: Math.round(tickMs),
      registry: { pollers: size.pollers, bytes: size.bytes },
      rowsPerTick: Math.round(rowsPerTick * 100) / 100,
      perPollerMonth: {
        doRequests: Math.round(doRequests),
        rowsWritten: Math.round(rowsWritten),
        gbSeconds: Math.round(gbSeconds * 10) / 10,
        usd: Math.round(usd * 10_000) / 10_000,
      },
    };
  } finally {
    await mf.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await fleet();
  console.log(JSON.stringify(figures, null, 2));
  writeFleetSection('docs/benchmarks.md', figures);
}

const START = '<!-- fleet:start -->';
const END = '<!-- fleet:end -->';

/**
 * Writes the fleet's figures into docs/benchmarks.md between markers, so `npm run bench`
 * (which writes the rest of the file, keeping this section) and this one share a document.
 */
export function writeFleetSection(path: string, figures: FleetFigures): void {
  const f = figures;
  const section = `${START}
## Fleet: ${f.pollers.toLocaleString('en')} runtime pollers in one deployment

Produced by \`npm run bench:fleet -- --pollers ${f.pollers} --minutes ${f.observedMinutes}\` on ${new Date().toISOString().slice(0, 10)}, in workerd
(Miniflare) on this machine (2 cores): every poller created through \`PUT /pollers/:name\`
with \`every = "60s"\` against an in-process upstream with nothing new, then left to tick on its
own alarm for ${f.observedMinutes} minutes of real time.

| figure | value |
|---|---:|
| creation through the API | ${f.createdPerSecond.toLocaleString('en')} pollers/s (${f.createSeconds} s for ${f.pollers.toLocaleString('en')}) |
| one watchdog tick: wall time | ${f.watchdog.ms} ms |
| one watchdog tick: subrequests | ${f.watchdog.subrequests} (${f.watchdog.visited} poller visits + 2 registry calls; by construction: WATCHDOG_SLICE = 200) |
| ticks observed | ${f.ticks.toLocaleString('en')} |
| ticks within their interval + 5 s | ${(f.onTimeShare * 100).toFixed(1)}% (${f.onTime.toLocaleString('en')}) |
| upstream requests per tick | ${f.upstreamRequestsPerTick} |
| mean wall time of a tick's run | ${f.tickMs} ms |
| rows written per tick, alarm writes included | ${f.rowsPerTick} (a sample of 100 pollers' own counters) |
| registry | ${f.registry.pollers.toLocaleString('en')} rows, ${(f.registry.bytes / 1024 / 1024).toFixed(1)} MB |

Cost per poller per month at one tick a minute with nothing new, in Cloudflare's units: ${f.perPollerMonth.doRequests.toLocaleString('en')} DO
requests (43,200 ticks, a registry report at most every 5 minutes, a watchdog visit every
${Math.ceil(f.pollers / 200)} minutes), ${f.perPollerMonth.rowsWritten.toLocaleString('en')} rows written, ${f.perPollerMonth.gbSeconds} GB-s of duration (128 MB for each tick's
measured wall time): **$${f.perPollerMonth.usd}** at $0.15 per million requests, $1.00 per million rows
written and $12.50 per million GB-s (Workers Paid; check the pricing page). Subrequests to the
upstream are not billed by Cloudflare. All pollers share one workerd process here; on
Cloudflare each Durable Object runs on its own, so the on-time share here is a lower bound.
${END}
`;
  const existing = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const at = existing.indexOf(START);
  const end = existing.indexOf(END);
  const next =
    at >= 0 && end > at
      ? `${existing.slice(0, at)}${section}${existing.slice(end + END.length + 1)}`
      : `${existing.trimEnd()}\n\n${section}`;
  writeFormatted(path, next);
}
