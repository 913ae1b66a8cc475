/**
 * The benchmarks' workerd: tidemark (as `wrangler deploy --dry-run` bundles it) and the
 * in-process world of bench/harness.js (upstream, receiver, bare loop), in one Miniflare.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';

export const ADMIN = 'bench-admin-token';
export const WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
export const BASE = Date.parse('2026-01-01T00:00:00Z');
export const INSPECTOR_PORT = 9_339;

/** Bundles the Worker once, as a deploy would. */
export function bundle(): void {
  const build = spawnSync(
    'node_modules/.bin/wrangler',
    ['deploy', '--dry-run', '--outdir', 'dist/bench'],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (build.status !== 0) throw new Error('wrangler could not bundle the Worker');
}

/** A poller of the bench upstream, delivering signed webhooks in batches of 100. */
export function benchPoller(latency: number, overrides: Record<string, unknown> = {}) {
  return {
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
    ...overrides,
  };
}

export interface Bench {
  mf: Miniflare;
  /** GET/POST on the harness (counters, reset, baseline). */
  harness(path: string): Promise<Record<string, number>>;
  /** POST /pollers/:name/run through tidemark's admin API: the run's outcome. */
  run(name: string): Promise<{ outcome: string; run?: { outcome: string; records: number } }>;
  /** What the poller's object wrote since it started. */
  storageStats(name: string): Promise<{ rowsWritten: number; ledgerRows: number }>;
  /** The workerd process that runs tidemark (and the harness), for its memory. */
  pid: number;
}

/** Starts tidemark and the harness with these pollers and this many upstream records. */
export async function startBench(pollers: Record<string, unknown>, records: number) {
  const before = new Set(childPids());
  const mf = new Miniflare(
    // The classic (v4) option shape, converted to Miniflare 5's.
    convertV4MiniflareOptions({
      // The V8 inspector of each isolate: the bench reads tidemark's heap through it.
      inspectorPort: INSPECTOR_PORT,
      workers: [
        {
          name: 'tidemark',
          modules: true,
          scriptPath: 'dist/bench/index.js',
          compatibilityDate: '2026-11-01',
          bindings: { POLLERS: JSON.stringify(pollers), ADMIN_TOKEN: ADMIN, WEBHOOK_SECRET },
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
          bindings: { BENCH_RECORDS: String(records), WEBHOOK_SECRET },
          serviceBindings: { UPSTREAM: 'harness', RECEIVER: 'harness' },
        },
      ],
    }),
  );
  await mf.ready;
  const pid = childPids().find((candidate) => !before.has(candidate));
  if (pid === undefined) throw new Error('could not find the workerd process Miniflare started');
  const harnessWorker = await mf.getWorker('harness');
  const tidemark = await mf.getWorker('tidemark');
  const namespace = await mf.getDurableObjectNamespace('POLLER', 'tidemark');
  const json = async (response: Promise<Response>) => JSON.parse(await (await response).text());
  const bench: Bench = {
    mf,
    pid,
    harness: (path) => json(harnessWorker.fetch(`https://harness.bench${path}`)),
    run: (name) =>
      json(
        tidemark.fetch(`https://tidemark.bench/pollers/${name}/run`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}` },
        }),
      ),
    storageStats: async (name) => {
      const stub = namespace.get(namespace.idFromName(name)) as unknown as {
        storageStats(): Promise<{ rowsWritten: number; ledgerRows: number }>;
      };
      return JSON.parse(JSON.stringify(await stub.storageStats()));
    },
  };
  await bench.harness('/counters'); // warm-up: the first request loads the modules
  return bench;
}

/** Resident memory of a process now (VmRSS) and at its peak (VmHWM), in MB. */
export function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Resets the peak (VmHWM) of a process, so a later peak belongs to what ran after. */
export function resetPeak(pid: number): boolean {
  try {
    execFileSync('sh', ['-c', `echo 5 > /proc/${pid}/clear_refs`]);
    return true;
  } catch {
    return false;
  }
}

function childPids(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}
