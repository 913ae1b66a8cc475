/**
 * `npm run bench:fleet`: ten thousand runtime pollers in one deployment, in workerd. Creates
 * them through the API (PUT /pollers/:name, each `every = "60s"`, against an in-process
 * upstream with nothing new), lets their own alarms tick for a while in real time, and
 * reports: the creation rate, one watchdog tick (wall time and subrequests), the share of
 * ticks that came within their interval + 5 s, the registry's rows and bytes, and the cost
 * per poller per month in Cloudflare's billing units, from counts taken in the run. The
 * watchdog's cron is fired every minute while watched, as Cloudflare would. With
 * `--lost-alarms P`, P% of the pollers lose their alarm while watched (bench/lost-alarms.ts),
 * and the bench reports how long each took to run again.
 *
 *   npm run bench:fleet -- --pollers 10000 --minutes 3
 *   npm run bench:fleet -- --pollers 5000 --lost-alarms 1
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';
import { REPORT_EVERY_MS } from '../src/registry/heartbeat.ts';
import { SHARD_VISITS } from '../src/watchdog/limits.ts';
import { PROBE } from './fleet-probe.ts';
import { type FleetFigures, writeFleetSection } from './fleet-section.ts';
import {
  type Loss,
  loseOnSchedule,
  lossyModules,
  planLosses,
  recoveryOf,
  writeLossyEntry,
} from './lost-alarms.ts';
import { ticksOnTime } from './ticks-on-time.ts';
import { ADMIN, bundle, compatibility, WEBHOOK_SECRET } from './workerd.ts';
import { cpuMs, workerdPid } from './workerd-process.ts';

const { values } = parseArgs({
  options: {
    pollers: { type: 'string', default: '10000' },
    minutes: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '50' },
    // Percent of the pollers whose alarms are deleted while watched (0: none).
    'lost-alarms': { type: 'string', default: '0' },
    // WATCHDOG_SLICE: overdue pollers visited per tick at most (and the round robin's floor).
    slice: { type: 'string', default: '200' },
    // WATCHDOG_ROUND: ticks in which the watchdog visits every runtime poller once.
    round: { type: 'string', default: '2' },
    // Where to keep every poller's tick times as JSON, to look at again.
    raw: { type: 'string' },
  },
});
const POLLERS = Number(values.pollers);
const MINUTES = Number(values.minutes);
const CONCURRENCY = Number(values.concurrency);
const LOST_PERCENT = Number(values['lost-alarms']);
const SLICE = Number(values.slice);
const ROUND = Number(values.round);
/** Losses fall at random moments of the watch's first 10 minutes, at any point of a round. */
const LOSS_SPREAD_MS = 10 * 60_000;
/**
 * With lost alarms, the watch lasts until the last loss is past its bound (the round's
 * WATCHDOG_ROUND ticks after the loss), and 4 minutes more.
 */
const WATCH_MINUTES = Math.max(MINUTES, LOST_PERCENT > 0 ? LOSS_SPREAD_MS / 60_000 + ROUND + 4 : 0);
const INTERVAL_MS = 60_000;
const LATE_MS = 5_000;

/** Published Workers Paid prices (USD), for the cost model: check the pricing page. */
const PRICE = {
  doRequestsPerMillion: 0.15,
  gbSecondsPerMillion: 12.5,
  rowsWrittenPerMillion: 1.0,
};

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

const sleepUntil = (at: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

/**
 * Fires the watchdog's cron at `from` and every minute after, as Cloudflare would, until
 * `until`; the wall time of each tick.
 */
async function cronEveryMinute(mf: Miniflare, from: number, until: number): Promise<number[]> {
  const took: number[] = [];
  for (let at = from; at <= until; at += 60_000) {
    await sleepUntil(at);
    const started = Date.now();
    const reply = await mf.dispatchFetch(
      'http://tidemark.bench/cdn-cgi/local/scheduled?cron=*+*+*+*+*',
    );
    if (!reply.ok) throw new Error(`a watchdog tick failed: ${await reply.text()}`);
    await reply.arrayBuffer();
    took.push(Date.now() - started);
  }
  await sleepUntil(until);
  return took;
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
  if (LOST_PERCENT > 0) writeLossyEntry();
  // What the watchdog's ticks logged: how many overdue pollers they visited, whom they repaired.
  const ticks = { overdueVisits: 0, repaired: new Set<string>() };
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      // The watchdog's tick through /cdn-cgi/local/scheduled, an HTTP call like the rest.
      unsafeTriggerHandlers: true,
      // A run's log line is for operators; errors and warnings still show.
      handleStructuredLogs: (log) => {
        if (log.level === 'error' || log.level === 'warn') console.error(log.message);
        if (log.message.startsWith('{"event":"watchdog"')) {
          const line = JSON.parse(log.message) as { overdue: number; repaired: string[] };
          ticks.overdueVisits += line.overdue;
          for (const name of line.repaired) ticks.repaired.add(name);
        }
      },
      workers: [
        {
          name: 'tidemark',
          ...(LOST_PERCENT > 0
            ? lossyModules()
            : { modules: true, scriptPath: 'dist/bench/index.js' }),
          ...compatibility(),
          bindings: {
            POLLERS: '{}',
            WATCHDOG_SLICE: String(SLICE),
            WATCHDOG_ROUND: String(ROUND),
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
      `created ${POLLERS} pollers in ${createSeconds.toFixed(1)} s; watching ${WATCH_MINUTES} min`,
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

    // The cron from here on, a tick a minute; and the losses, if asked for, at their moments.
    const watchUntil = observedFrom + WATCH_MINUTES * 60_000;
    const plan =
      LOST_PERCENT > 0 ? planLosses(names, LOST_PERCENT, Date.now(), LOSS_SPREAD_MS) : [];
    const losing = loseOnSchedule(plan, async (name) => {
      const reply = await probe.fetch(`https://probe.bench/lose?names=${name}`);
      if (!reply.ok) throw new Error(`${name}: its alarm could not be deleted: ${reply.status}`);
      await reply.arrayBuffer();
    });
    const tickMsWhileWatched = await cronEveryMinute(mf, Date.now() + 60_000, watchUntil);
    const losses: Loss[] = await losing;
    const lost = new Set(losses.map((loss) => loss.name));
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
    // On time: the pollers that kept their alarms.
    const kept = names.filter((name) => !lost.has(name));
    const { tickCount, onTime, silent, pollersOnTime } = ticksOnTime(
      kept.map((name) => asked[name] ?? []),
      observedFrom,
      observedTo,
      INTERVAL_MS + LATE_MS,
    );
    const size = await probed<{ pollers: number; bytes: number }>('/registry');
    // Rows written per tick (alarm writes included, as billed), from a sample of pollers'
    // own counters: what they wrote while watched, over the ticks the upstream saw them make
    // meanwhile (their run counters leave out the idle runs an eviction lost before they were
    // written). An object's counters written since its last write are lost with it too, so
    // this is a lower bound when objects are evicted between ticks.
    const after = await sampleCounters(sample);
    const sampleRuns = sample.reduce(
      (sum, name) =>
        sum + (asked[name] ?? []).filter((at) => at >= observedFrom && at <= observedTo).length,
      0,
    );
    const rowsPerTick = sampleRuns === 0 ? 0 : (after.rows - before.rows) / sampleRuns;
    // The wall time of each sampled poller's last run (the history folds idle runs).
    const tickMs =
      after.lastRunMs.length === 0
        ? 0
        : after.lastRunMs.reduce((sum, ms) => sum + ms, 0) / after.lastRunMs.length;
    // By construction: the round robin's share of a tick, and the cron invocation's own
    // subrequests (a share above SHARD_VISITS goes out in groups, one WatchdogShard call each).
    const visited = Math.max(Math.min(SLICE, POLLERS), Math.ceil(POLLERS / ROUND));
    const groups = visited > SHARD_VISITS ? Math.ceil(visited / SHARD_VISITS) : 0;

    // Per poller per month, ticking once a minute with nothing new: one alarm invocation per
    // tick (a DO request), a registry report every REPORT_EVERY (its heartbeat), a watchdog
    // visit every WATCHDOG_ROUND minutes (a DO request that writes nothing); rows as counted
    // above, plus the registry's two per report (the row and its entry in the overdue index);
    // duration at 128 MB for the measured wall time of a tick (a visit is charged as one too).
    const month = 30 * 24 * 60;
    const ticksPerMonth = (month * 60_000) / INTERVAL_MS;
    const reportsPerMonth = (month * 60_000) / REPORT_EVERY_MS;
    const visitsPerMonth = (month * visited) / POLLERS;
    const doRequests = ticksPerMonth + reportsPerMonth + visitsPerMonth;
    const rowsWritten = ticksPerMonth * rowsPerTick + reportsPerMonth * 2;
    const gbSeconds = (ticksPerMonth + visitsPerMonth) * 0.125 * (tickMs / 1000);
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
        visited,
        subrequests: (groups > 0 ? groups : visited) + 2,
        groups,
      },
      slice: SLICE,
      round: ROUND,
      watchdogTicks: {
        count: 1 + tickMsWhileWatched.length,
        maxMs: Math.round(Math.max(watchdogMs, ...tickMsWhileWatched)),
        overdueVisits: ticks.overdueVisits,
      },
      lostAlarms:
        losses.length === 0
          ? null
          : {
              ...recoveryOf(losses, asked, ticks.repaired),
              percent: LOST_PERCENT,
              spreadMinutes: LOSS_SPREAD_MS / 60_000,
            },
      observedMinutes: Math.round(((observedTo - observedFrom) / 60_000) * 10) / 10,
      ticks: tickCount,
      watched: kept.length,
      onTime,
      onTimeShare: tickCount === 0 ? 0 : onTime / tickCount,
      silent,
      pollersOnTime,
      upstreamRequestsPerTick:
        Math.round(((pages.pages - pagesBefore) / Math.max(tickCount, 1)) * 100) / 100,
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
