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
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { writeFormatted } from '../sim/write-formatted.ts';
import { ADMIN, bundle, compatibility, WEBHOOK_SECRET } from './workerd.ts';

const { values } = parseArgs({
  options: {
    pollers: { type: 'string', default: '10000' },
    minutes: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '50' },
    // Where to keep every poller's tick times as JSON, to look at again.
    raw: { type: 'string' },
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
  watchdog: {
    ms: number;
    cpuMs: number;
    /** The share of a core the ticking fleet took meanwhile. */
    backgroundShare: number;
    visited: number;
    subrequests: number;
  };
  observedMinutes: number;
  ticks: number;
  onTime: number;
  onTimeShare: number;
  /** Pollers that never ticked while watched. */
  silent: number;
  /** Pollers every one of whose ticks came within interval + 5 s, to the end of the watch. */
  pollersOnTime: number;
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

function config(name: string) {
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
      // The tenant lets the upstream tell the bench when each poller ticked.
      params: { limit: '100', tenant: name },
      next: { type: 'cursor', param: 'cursor', path: 'next' },
    },
    deliver: { type: 'webhook', url: 'https://receiver.bench/hook', secret: '${WEBHOOK_SECRET}' },
  };
}

/** The probe Worker: pollers' write counters and recent runs, and the registry's size. */
const PROBE = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/registry') {
      return Response.json(await env.REGISTRY.get(env.REGISTRY.idFromName('registry')).size());
    }
    const names = (url.searchParams.get('names') ?? '').split(',').filter(Boolean);
    const read = [];
    for (const name of names) {
      const stub = env.POLLER.get(env.POLLER.idFromName(name));
      const stats = await stub.storageStats();
      const status = await stub.status();
      const last = status.last_run;
      read.push({
        rows: stats.rowsWritten + stats.alarmWrites,
        runs: status.counters.runs,
        lastRunMs: last ? Date.parse(last.finished_at) - Date.parse(last.started_at) : null,
      });
    }
    return Response.json(read);
  },
};
`;

/** The workerd process Miniflare started: the newest child of this process named workerd. */
function workerdPid(): number | null {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  const named = children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'workerd';
    } catch {
      return false;
    }
  });
  return named.at(-1) ?? null;
}

/** User + system CPU time of a process so far, in ms (Linux /proc; 0 elsewhere). */
function cpuMs(pid: number | null): number {
  if (pid === null) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100;
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
      // The watchdog's tick through /cdn-cgi/local/scheduled, an HTTP call like the rest.
      unsafeTriggerHandlers: true,
      // A run's log line is for operators; errors and warnings still show.
      handleStructuredLogs: (log) => {
        if (log.level === 'error' || log.level === 'warn') console.error(log.message);
      },
      workers: [
        {
          name: 'tidemark',
          modules: true,
          scriptPath: 'dist/bench/index.js',
          ...compatibility(),
          bindings: {
            POLLERS: '{}',
            ADMIN_TOKEN: ADMIN,
            STATUS_TOKEN: ADMIN,
            WEBHOOK_SECRET,
            // What the benchmark's runtime pollers reach: the harness, by service binding.
            FLEET_POLICY: JSON.stringify({ env: ['WEBHOOK_SECRET'], bindings: ['UPSTREAM'] }),
          },
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
          routes: ['harness.bench/*'],
          // Nothing new upstream: each tick is one request for an empty page.
          bindings: { BENCH_RECORDS: '0', WEBHOOK_SECRET },
          serviceBindings: { UPSTREAM: 'harness', RECEIVER: 'harness' },
        },
        {
          // Reads pollers' counters and the registry's size over RPC inside workerd, and
          // answers over HTTP.
          name: 'probe',
          modules: true,
          script: PROBE,
          compatibilityDate: '2026-11-01',
          routes: ['probe.bench/*'],
          durableObjects: {
            POLLER: { className: 'Poller', scriptName: 'tidemark', useSQLite: true },
            REGISTRY: { className: 'Registry', scriptName: 'tidemark', useSQLite: true },
          },
        },
      ],
    }),
  );
  try {
    await mf.ready;
    // Every call from here goes over HTTP (dispatchFetch, routed by host), none through
    // Miniflare's proxies: those wait synchronously, and under this load workerd can block
    // writing its logs to this process meanwhile (a deadlock seen at 10,000 pollers).
    const harness = { fetch: (url: string) => mf.dispatchFetch(url) };
    const probe = harness;
    const tidemark = {
      fetch: (
        url: string,
        init: { method: string; headers: Record<string, string>; body?: string },
      ) => mf.dispatchFetch(url, init),
    };
    const probed = async <T>(path: string) =>
      (await (await probe.fetch(`https://probe.bench${path}`)).json()) as T;
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
      const response = await api('PUT', `/pollers/${name}`, config(name));
      if (response.status !== 201)
        throw new Error(`${name}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    });
    const createSeconds = (performance.now() - created) / 1000;
    const sample = names.filter((_, index) => index % Math.max(1, Math.floor(POLLERS / 100)) === 0);
    const sampleCounters = async (of: string[]) => {
      const read = await probed<{ rows: number; runs: number; lastRunMs: number | null }[]>(
        `/pollers?names=${of.join(',')}`,
      );
      if (read.length !== of.length) throw new Error(`the probe read ${read.length} pollers`);
      return {
        rows: read.reduce((sum, poller) => sum + poller.rows, 0),
        runs: read.reduce((sum, poller) => sum + poller.runs, 0),
        lastRunMs: read.flatMap((poller) => (poller.lastRunMs === null ? [] : [poller.lastRunMs])),
      };
    };
    const before = await sampleCounters(sample);
    const pagesBefore = (
      (await (await harness.fetch('https://harness.bench/counters')).json()) as { pages: number }
    ).pages;
    const observedFrom = Date.now();
    console.log(
      `created ${POLLERS} pollers in ${createSeconds.toFixed(1)} s; watching ${MINUTES} min`,
    );

    // One watchdog tick, as the Cron Trigger would run it.
    // Its CPU: the workerd process's, above what the ticking fleet took in the 10 s before.
    const workerd = workerdPid();
    const backgroundFrom = cpuMs(workerd);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const cpuBefore = cpuMs(workerd);
    const background = (cpuBefore - backgroundFrom) / 10_000;
    const tick = performance.now();
    const outcome = await mf.dispatchFetch(
      'http://tidemark.bench/cdn-cgi/local/scheduled?cron=*+*+*+*+*',
    );
    const watchdogMs = performance.now() - tick;
    const watchdogCpuMs = Math.max(0, cpuMs(workerd) - cpuBefore - background * watchdogMs);
    const backgroundShare = background;
    if (!outcome.ok) throw new Error(`the watchdog tick failed: ${await outcome.text()}`);
    await outcome.arrayBuffer();

    await new Promise((resolve) => setTimeout(resolve, MINUTES * 60_000));
    const observedTo = Date.now();
    const pages = (await (await harness.fetch('https://harness.bench/counters')).json()) as {
      pages: number;
    };

    // When each poller ticked, as the upstream saw it: within interval + 5 s of the one
    // before (or of the start of the watch, for the first)?
    const asked = (await (await harness.fetch('https://harness.bench/tenants')).json()) as Record<
      string,
      number[]
    >;
    if (values.raw) writeFileSync(values.raw, JSON.stringify({ observedFrom, observedTo, asked }));
    let ticks = 0;
    let onTime = 0;
    let silent = 0;
    let pollersOnTime = 0;
    for (const name of names) {
      const starts = (asked[name] ?? []).filter((at) => at >= observedFrom && at <= observedTo);
      if (starts.length === 0) silent += 1;
      ticks += starts.length;
      let previous = observedFrom;
      let late = 0;
      for (const start of starts) {
        if (start - previous <= INTERVAL_MS + LATE_MS) onTime += 1;
        else late += 1;
        previous = start;
      }
      // And from its last tick to the end of the watch: no tick may be missing at the end.
      if (observedTo - previous > INTERVAL_MS + LATE_MS) late += 1;
      if (late === 0 && starts.length > 0) pollersOnTime += 1;
    }
    const size = await probed<{ pollers: number; bytes: number }>('/registry');
    // Rows written per tick (alarm writes included, as billed), from a sample of pollers'
    // own counters: what they wrote while watched, over the runs they made meanwhile.
    const after = await sampleCounters(sample);
    const sampleRuns = after.runs - before.runs;
    const rowsPerTick = sampleRuns === 0 ? 0 : (after.rows - before.rows) / sampleRuns;
    // The wall time of each sampled poller's last run (the history folds idle runs).
    const tickMs =
      after.lastRunMs.length === 0
        ? 0
        : after.lastRunMs.reduce((sum, ms) => sum + ms, 0) / after.lastRunMs.length;
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
      watchdog: {
        ms: Math.round(watchdogMs),
        cpuMs: Math.round(watchdogCpuMs),
        backgroundShare: Math.round(backgroundShare * 100) / 100,
        visited: slice,
        subrequests: slice + 2,
      },
      observedMinutes: Math.round(((observedTo - observedFrom) / 60_000) * 10) / 10,
      ticks,
      onTime,
      onTimeShare: ticks === 0 ? 0 : onTime / ticks,
      silent,
      pollersOnTime,
      upstreamRequestsPerTick:
        Math.round(((pages.pages - pagesBefore) / Math.max(ticks, 1)) * 100) / 100,
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

Produced by \`npm run bench:fleet -- --pollers ${f.pollers} --minutes ${Math.round(f.observedMinutes)}\` on ${new Date().toISOString().slice(0, 10)}, in
workerd (Miniflare) on this machine (2 cores): every poller created through
\`PUT /pollers/:name\` with \`every = "60s"\` against an in-process upstream with nothing new,
then left to tick on its own alarm for ${f.observedMinutes} minutes of real time. Ticks are counted by the upstream (each poller names
itself in a query parameter), so reading them wakes no poller.

| figure | value |
|---|---:|
| creation through the API | ${f.createdPerSecond.toLocaleString('en')} pollers/s (${f.createSeconds} s for ${f.pollers.toLocaleString('en')}) |
| one watchdog tick: wall time | ${f.watchdog.ms} ms |
| one watchdog tick: CPU | ${f.watchdog.cpuMs} ms (the workerd process's during the tick, less what the ticking fleet took in the 10 s before: ${Math.round(f.watchdog.backgroundShare * 100)}% of a core; the Worker, the registry and the ${f.watchdog.visited} pollers it visits) |
| one watchdog tick: subrequests | ${f.watchdog.subrequests} (${f.watchdog.visited} poller visits + 2 registry calls; by construction: WATCHDOG_SLICE = 200) |
| ticks observed | ${f.ticks.toLocaleString('en')} |
| ticks within their interval + 5 s | ${(f.onTimeShare * 100).toFixed(1)}% (${f.onTime.toLocaleString('en')}) |
| pollers whose every tick came within interval + 5 s | ${((f.pollersOnTime / f.pollers) * 100).toFixed(1)}% (${f.pollersOnTime.toLocaleString('en')}) |
| pollers that never ticked while watched | ${f.silent.toLocaleString('en')} |
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await fleet();
  console.log(JSON.stringify(figures, null, 2));
  writeFleetSection('docs/benchmarks.md', figures);
}
