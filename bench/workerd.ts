/**
 * The benchmarks' workerd: tidemark (as `wrangler deploy --dry-run` bundles it), the
 * in-process world of bench/harness.js (upstream, receiver) and the bare loop
 * (bench/bare-loop.js), each in its own isolate, in one Miniflare.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { convertV4MiniflareOptions, Miniflare } from 'miniflare';

export const ADMIN = 'bench-admin-token';
export const WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
export const BASE = Date.parse('2026-01-01T00:00:00Z');
export const INSPECTOR_PORT = 9_339;

/** tidemark's compatibility date and flags, as wrangler.toml sets them for a deploy. */
export function compatibility(): { compatibilityDate: string; compatibilityFlags: string[] } {
  const toml = readFileSync('wrangler.toml', 'utf8');
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  if (date === undefined) throw new Error('wrangler.toml has no compatibility_date');
  // A TOML array of double-quoted strings reads as JSON.
  const flags = /^compatibility_flags\s*=\s*(\[[^\]]*\])/m.exec(toml)?.[1];
  return { compatibilityDate: date, compatibilityFlags: flags ? JSON.parse(flags) : [] };
}

/**
 * Bundles the Worker once, as a deploy would (minified, as wrangler.toml says); a profile
 * asks for it unminified, so that its functions keep their names.
 */
export function bundle({ minify = true }: { minify?: boolean } = {}): void {
  const build = spawnSync(
    'node_modules/.bin/wrangler',
    ['deploy', '--dry-run', '--outdir', 'dist/bench', ...(minify ? [] : ['--minify=false'])],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (build.status !== 0) throw new Error('wrangler could not bundle the Worker');
}

/** A poller of the bench upstream, delivering signed webhooks in batches of 100. */
export function benchPoller(
  latency: number,
  overrides: Record<string, unknown> = {},
  params: Record<string, string> = {},
) {
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
      params: { limit: '100', latency: String(latency), ...params },
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

/** What a poller's object says it has written to storage, from its persisted counters. */
export interface StorageStats {
  /** SQLite rows written, index rows included, as the platform bills them. */
  rowsWritten: number;
  /** Alarm sets and deletes (each billed as a row written). */
  alarmWrites: number;
  ledgerRows: number;
}

/**
 * The Poller object's RPC methods the bench calls (src/poller/rpc.ts): the object knows its
 * name from its id, so none takes it.
 */
interface PollerStub {
  trigger(kind: 'cron' | 'manual'): Promise<unknown>;
  ensureScheduled(): Promise<unknown>;
  setPaused(meant: number, paused: boolean, reason: string | null): Promise<unknown>;
  runs(limit: number): Promise<unknown>;
  status(): Promise<unknown>;
  storageStats(): Promise<StorageStats>;
}

/** One line of a poller's run history, as the bench reads it. */
export interface BenchRun {
  outcome: string;
  trigger: string;
  startedAt: number;
  finishedAt: number;
  records: number;
  pages: number;
}

export interface Bench {
  mf: Miniflare;
  /** GET/POST on the harness (counters, reset, publish). */
  harness(path: string): Promise<Record<string, number>>;
  /** The bare loop over `records` records at `latency` ms per call: its records and time. */
  bareLoop(latency: number, records?: number): Promise<{ records: number; ms: number }>;
  /** POST /pollers/:name/run through tidemark's admin API: the run's outcome. */
  run(name: string): Promise<{ outcome: string; run?: { outcome: string; records: number } }>;
  /** A cron or manual trigger through the object's RPC: takes the lease, the alarm runs. */
  trigger(name: string, kind?: 'cron' | 'manual'): Promise<unknown>;
  /** What the watchdog does for each poller: books its first tick and sets its alarm. */
  schedule(name: string): Promise<unknown>;
  pause(name: string): Promise<unknown>;
  /** The newest runs, newest first. */
  runs(name: string, limit?: number): Promise<BenchRun[]>;
  /** What the poller's object has written, from its persisted counters. */
  storageStats(name: string): Promise<StorageStats>;
  /** The workerd process that runs tidemark (and the harness), for its memory. */
  pid: number;
}

/**
 * Starts tidemark, the harness and the bare loop with these pollers and upstream records.
 * With `inspector`, every isolate can be reached through the V8 inspector (heap, profiles):
 * it slows every isolate down, unevenly, so timed runs go without it.
 */
export async function startBench(
  pollers: Record<string, unknown>,
  records: number,
  { inspector = false }: { inspector?: boolean } = {},
) {
  const before = new Set(childPids());
  const mf = new Miniflare(
    // The classic (v4) option shape, converted to Miniflare 5's.
    convertV4MiniflareOptions({
      // The V8 inspector of each isolate: the bench reads tidemark's heap through it.
      ...(inspector ? { inspectorPort: INSPECTOR_PORT } : {}),
      // The runs' log lines are for operators; errors and warnings still show.
      handleStructuredLogs: (log) => {
        if (log.level === 'error' || log.level === 'warn') console.error(log.message);
      },
      workers: [
        {
          name: 'tidemark',
          modules: true,
          scriptPath: 'dist/bench/index.js',
          ...compatibility(),
          bindings: { POLLERS: JSON.stringify(pollers), ADMIN_TOKEN: ADMIN, WEBHOOK_SECRET },
          durableObjects: {
            POLLER: { className: 'Poller', useSQLite: true },
            DEMO_UPSTREAM: { className: 'DemoUpstream', useSQLite: true },
            REGISTRY: { className: 'Registry', useSQLite: true },
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
          bindings: { BENCH_RECORDS: String(records) },
        },
        {
          name: 'bare',
          modules: true,
          scriptPath: 'bench/bare-loop.js',
          compatibilityDate: '2026-11-01',
          bindings: { WEBHOOK_SECRET },
          serviceBindings: { UPSTREAM: 'harness' },
          outboundService: 'harness',
        },
      ],
    }),
  );
  await mf.ready;
  const pid = childPids().find((candidate) => !before.has(candidate));
  if (pid === undefined) throw new Error('could not find the workerd process Miniflare started');
  const harnessWorker = await mf.getWorker('harness');
  const bareWorker = await mf.getWorker('bare');
  const tidemark = await mf.getWorker('tidemark');
  const namespace = await mf.getDurableObjectNamespace('POLLER', 'tidemark');
  const json = async (response: Promise<Response>) => JSON.parse(await (await response).text());
  const stub = (name: string) => namespace.get(namespace.idFromName(name)) as unknown as PollerStub;
  // What comes back over RPC is a proxy: a JSON round trip makes it plain data.
  const plain = async <T>(value: Promise<unknown>) => JSON.parse(JSON.stringify(await value)) as T;
  const bench: Bench = {
    mf,
    pid,
    harness: (path) => json(harnessWorker.fetch(`https://harness.bench${path}`)),
    bareLoop: (latency, total) =>
      json(
        bareWorker.fetch(
          `https://bare.bench/?latency=${latency}${total === undefined ? '' : `&total=${total}`}`,
        ),
      ),
    run: (name) =>
      json(
        tidemark.fetch(`https://tidemark.bench/pollers/${name}/run`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}` },
        }),
      ),
    trigger: (name, kind = 'manual') => plain(stub(name).trigger(kind)),
    schedule: (name) => plain(stub(name).ensureScheduled()),
    // The bench's pollers are static (its POLLERS): their life is STATIC_INCARNATION, 0.
    pause: (name) => plain(stub(name).setPaused(0, true, 'bench: measured')),
    runs: (name, limit = 1) => plain(stub(name).runs(limit)),
    storageStats: (name) => plain(stub(name).storageStats()),
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
