/**
 * Redeliveries per crash: the real engine (PollerEngine over the in-memory store, in Node)
 * delivers one long window, unsorted (C moves only when it ends), pages of 100, and its
 * object dies at a random delivery, as after a SIGKILL: from then on its store refuses every
 * call and no answer reaches it. The lease expires, a fresh instance over the same storage
 * recovers and finishes the window. Counted: what the receiver got more than once.
 *
 * Like with like: the same engine, store and crash points with the store's per-page memory
 * (rememberPage, #23) and without it (rememberPage writing nothing: the window's deliveries
 * reach the ledger only when it ends, as before). The in-memory store stands for SQLite: both
 * write synchronously, before the next await (R6).
 */

import { Crash, storeOfInstance } from '../sim/world.ts';
import { loadPoller } from '../src/config/load.ts';
import { MemoryStore } from '../src/engine/memory-store.ts';
import { PAGES_KEPT_EVERY_MS } from '../src/engine/poll-window.ts';
import { PollerEngine } from '../src/engine/poller.ts';
import type { DeliveryItem, PollerStore, RunContext, Update } from '../src/engine/ports.ts';
import { type Spread, spread } from './stats.ts';

const BASE = Date.UTC(2026, 0, 1);
const PAGE = 100;

export interface CrashVariant {
  batch: number;
  concurrency: number;
  /** How long the upstream takes to answer a page (virtual time). */
  pageMs: number;
  /**
   * deliver.concurrency × deliver.batch plus the page in flight (#23), or the pages of
   * PAGES_KEPT_EVERY_MS when they come faster: the bound.
   */
  inFlight: number;
  with: Spread;
  without: Spread;
}

export interface Redeliveries {
  records: number;
  crashes: number;
  variants: CrashVariant[];
}

/** Positions from a seeded source (mulberry32): every variant dies at the same points. */
export function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function config(concurrency: number) {
  const entry = loadPoller(
    'bench',
    {
      every: '1m',
      start_from: new Date(BASE).toISOString(),
      lease_ttl: '15m',
      max_run: '10m',
      max_subrequests: 100_000,
      source: { url: 'https://bench.test/items', from_param: 'from' },
      deliver: { type: 'handler', name: 'bench', concurrency },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry.config;
}

/** One window of `records`, its object killed at delivery request `killAt`: the redeliveries. */
async function crashOnce(
  records: number,
  batch: number,
  concurrency: number,
  killAt: number,
  perBatchMemory: boolean,
  pageMs: number,
): Promise<number> {
  const updates: Update[] = Array.from({ length: records }, (_, i) => ({
    id: `r${i}`,
    version: new Date(BASE + 1_000 + i).toISOString(),
    versionMs: BASE + 1_000 + i,
    record: { id: `r${i}` },
  }));
  const received = new Map<string, number>();
  let requests = 0;
  let clock = BASE + 3_600_000;
  const storage = new MemoryStore();
  const durable: PollerStore = perBatchMemory
    ? storage
    : new Proxy(storage, {
        get: (target, key, receiver) =>
          key === 'rememberPage'
            ? (epoch: number) => target.holds(epoch)
            : Reflect.get(target, key, receiver),
      });
  let instance = 0;
  let died!: () => void;
  const death = new Promise<void>((resolve) => {
    died = resolve;
  });
  const cfg = config(concurrency);
  const engineOf = (me: number) => {
    const alive = () => instance === me;
    const context: RunContext = {
      poller: 'bench',
      config: cfg,
      store: storeOfInstance(durable, alive),
      source: {
        fetchPage: async (_window, cursor) => {
          await Promise.resolve();
          if (!alive()) return new Promise(() => {});
          clock += pageMs;
          const offset = Number(cursor ?? 0);
          const next = offset + PAGE < records ? String(offset + PAGE) : null;
          return { ok: true, updates: updates.slice(offset, offset + PAGE), malformed: [], next };
        },
      },
      deliverer: {
        batch,
        deliver: async (items: DeliveryItem[]) => {
          if (!alive()) return new Promise(() => {});
          requests += 1;
          for (const item of items) {
            received.set(item.update.id, (received.get(item.update.id) ?? 0) + 1);
          }
          if (requests === killAt) {
            instance += 1; // the object dies with this request in flight
            died();
          }
          await new Promise((resolve) => setImmediate(resolve));
          if (!alive()) return new Promise(() => {});
          return { kind: 'delivered' as const };
        },
      },
      now: () => clock,
      random: Math.random,
    };
    return new PollerEngine(context, { set: async () => {} });
  };
  void engineOf(0)
    .runNow()
    .catch((error: unknown) => {
      if (!(error instanceof Crash)) throw error;
    });
  await death;
  clock += 16 * 60_000; // the lease expires; the alarm recovers
  await engineOf(1).onAlarm();
  if (received.size !== records) throw new Error(`lost ${records - received.size} records`);
  return [...received.values()].reduce((sum, n) => sum + n - 1, 0);
}

export async function redeliveriesPerCrash(
  records: number,
  crashes: number,
): Promise<Redeliveries> {
  const variants: CrashVariant[] = [];
  for (const { batch, concurrency, pageMs } of [
    { batch: 1, concurrency: 6, pageMs: 60 },
    { batch: 100, concurrency: 6, pageMs: 60 },
    { batch: 1, concurrency: 6, pageMs: 5 },
  ]) {
    const random = seeded(23);
    const requests = Math.ceil(records / batch);
    const points = Array.from({ length: crashes }, () => 1 + Math.floor(random() * requests));
    const withMemory: number[] = [];
    const withoutMemory: number[] = [];
    for (const at of points) {
      withMemory.push(await crashOnce(records, batch, concurrency, at, true, pageMs));
      withoutMemory.push(await crashOnce(records, batch, concurrency, at, false, pageMs));
    }
    variants.push({
      batch,
      concurrency,
      pageMs,
      inFlight: batch * concurrency + PAGE * Math.max(1, Math.ceil(PAGES_KEPT_EVERY_MS / pageMs)),
      with: spread(withMemory),
      without: spread(withoutMemory),
    });
  }
  return { records, crashes, variants };
}
