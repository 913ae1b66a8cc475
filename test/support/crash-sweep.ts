/**
 * Crash sweeps: the real engine (PollerEngine over the in-memory store, HttpSource over an
 * in-process fake) killed at one point of a run, as after a SIGKILL: from then on its store
 * refuses every call (the ports inside it too) and no answer reaches it. The lease expires,
 * a fresh instance over the same storage recovers and runs until there is nothing left to
 * do. Each trial says what the receiver got more than once and what it lacks of the
 * upstream's records at the end. A point is a delivery request (the receiver got it, its
 * answer is lost), an upstream request (asked, never answered) or a store write (the run
 * dies just before it: after a delivery and before its id-memory or progress write, say).
 */

import { Crash } from '../../sim/world.ts';
import type { PollerConfig } from '../../src/config/schema.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { DeliveryItem, RunContext } from '../../src/engine/ports.ts';

const MINUTE = 60_000;

/** Where a run dies: its n-th (from 1) delivery request, upstream request or store write. */
export type CrashKind = 'delivery' | 'request' | 'write';

export interface CrashPoint {
  kind: CrashKind;
  index: number;
}

/** The upstream as a fetch: what HttpSource sends its requests to. */
export type Fetch = (request: Request) => Promise<Response>;

/** What a sweep runs, built afresh for every trial. */
export interface SweepWorld {
  readonly config: PollerConfig;
  /** deliver.batch: records per delivery request (the handler's, in the sweeps). */
  readonly batch: number;
  /** The run that dies is the poller's first: none settles before it. */
  readonly diesFirst?: boolean;
  /** The clock the upstream stamps its changes with: the engine's too. */
  readonly clock: { now: number };
  /** The engine's sources (and children's, and a reconciler's), over `fetch`. */
  ports(fetch: Fetch): Pick<RunContext, 'source' | 'children' | 'isDeleted' | 'reconcile'>;
  /** The upstream itself. */
  fetch: Fetch;
  /** What changes upstream: before the run that dies, and while it is dead. */
  change(stage: 'before' | 'while dead'): void;
  /** Every record the receiver must end with, by id, as `content` shows it; none deleted. */
  upstream(): Map<string, string>;
  /** A delivered upsert's record, shown as `upstream` shows it. */
  content(item: DeliveryItem): string;
}

/** How one trial went. */
export interface Trial {
  /** Whether the run died: false when it ended before the point. */
  crashed: boolean;
  /** Deliveries of what the receiver had got before (the same op, id and version). */
  redeliveries: number;
  /** Ids whose content at the receiver is not the upstream's at the end (`id: got ≠ has`). */
  lost: string[];
  /** Upstream requests of the whole trial. */
  requests: number;
  /** Of the run that dies: the points it passed, per kind (or all it had, if it did not die). */
  passed: Record<CrashKind, number>;
  /** The point it died at: the store write, the request (`GET /path?query`) or the ids sent. */
  diedAt: string | null;
}

/** Store calls that write nothing: no crash point before them (one before a write is enough). */
const READS = new Set(['read', 'holds', 'delivered', 'failing', 'idsOf', 'known', 'checkpoint']);

/**
 * The store as one instance sees it (sim/world.ts storeOfInstance, and the ports inside it:
 * rounds, childProgress): once the instance died, every call throws a Crash. `beforeWrite`
 * is called before each write and may kill the instance, so that write never happens.
 */
export function instanceStore<T extends object>(
  store: T,
  alive: () => boolean,
  beforeWrite: (name: string) => void,
): T {
  const wrapped = new WeakMap<object, object>();
  const wrap = <U extends object>(target: U, prefix: string): U => {
    const known = wrapped.get(target);
    if (known) return known as U;
    const proxy = new Proxy(target, {
      get(inner, property) {
        const value: unknown = Reflect.get(inner, property);
        const name = `${prefix}${String(property)}`;
        if (value !== null && typeof value === 'object') return wrap(value, `${name}.`);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (!alive()) throw new Crash('instance gone');
          if (!READS.has(String(property))) beforeWrite(name);
          if (!alive()) throw new Crash('died before this write');
          return (value as (...a: unknown[]) => unknown).apply(inner, args);
        };
      },
    });
    wrapped.set(target, proxy);
    return proxy;
  };
  return wrap(store, '');
}

/** A promise that never settles: the answer that does not reach a dead instance. */
function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}

/** The receiver: every delivery counted by op, id and version; the last of each id kept. */
class Receiver {
  readonly got = new Map<string, number>();
  readonly last = new Map<string, string | null>();
  redeliveries = 0;

  constructor(private readonly world: SweepWorld) {}

  take(items: readonly DeliveryItem[]): void {
    for (const item of items) {
      const key = `${item.op} ${item.idempotencyKey}`;
      const before = this.got.get(key) ?? 0;
      if (before > 0) this.redeliveries += 1;
      this.got.set(key, before + 1);
      this.last.set(item.update.id, item.op === 'delete' ? null : this.world.content(item));
    }
  }

  /** What the receiver lacks or holds wrongly of `upstream`. */
  lost(upstream: Map<string, string>): string[] {
    const lost: string[] = [];
    for (const [id, content] of upstream) {
      const has = this.last.get(id) ?? null;
      if (has !== content) lost.push(`${id}: ${has ?? 'absent'} ≠ ${content}`);
    }
    for (const [id, has] of this.last) {
      if (has !== null && !upstream.has(id)) lost.push(`${id}: ${has} ≠ deleted`);
    }
    return lost.sort();
  }
}

/** How a sweep runs. */
export interface SweepOptions {
  /** How long the upstream takes to answer a request (virtual time). */
  pageMs: number;
  /** The storage (default: a MemoryStore): a test breaks it on purpose to see a sweep fail. */
  storage?: () => MemoryStore;
}

/**
 * One trial: the world's first runs until they settle, its `before` changes, a run killed at
 * `point` (null: none), its `while dead` changes, the recovery at the lease's expiry, and
 * runs until they settle.
 */
export async function crashTrial(
  make: () => SweepWorld,
  point: CrashPoint | null,
  options: SweepOptions,
): Promise<Trial> {
  const world = make();
  const { clock, config } = world;
  const { pageMs } = options;
  const storage = options.storage?.() ?? new MemoryStore();
  const receiver = new Receiver(world);
  const passed: Record<CrashKind, number> = { delivery: 0, request: 0, write: 0 };
  let armed = false;
  let requests = 0;
  let instance = 0;
  let died!: () => void;
  const death = new Promise<'died'>((resolve) => {
    died = () => resolve('died');
  });
  let diedAt: string | null = null;
  /** Counts a point of the run that dies; true (and the instance dead) when it is `point`. */
  const reached = (kind: CrashKind, what: () => string): boolean => {
    if (!armed) return false;
    passed[kind] += 1;
    if (point?.kind !== kind || passed[kind] !== point.index) return false;
    armed = false;
    diedAt = what();
    instance += 1;
    died();
    return true;
  };
  const engineOf = (me: number) => {
    const alive = () => instance === me;
    const fetch: Fetch = async (request) => {
      if (!alive()) return never();
      requests += 1;
      clock.now += pageMs;
      const url = new URL(request.url);
      if (reached('request', () => `${request.method} ${url.pathname}${url.search}`)) {
        void world.fetch(request); // asked: the upstream sees it; no answer comes back
        return never();
      }
      const response = await world.fetch(request);
      return alive() ? response : never();
    };
    const context: RunContext = {
      poller: 'sweep',
      config,
      store: instanceStore(storage, alive, (name) => reached('write', () => name)),
      ...world.ports(fetch),
      deliverer: {
        batch: world.batch,
        deliver: async (items: DeliveryItem[]) => {
          if (!alive()) return never();
          receiver.take(items);
          const sent = () => items.map((item) => `${item.op} ${item.update.id}`).join(', ');
          if (reached('delivery', sent)) return never(); // dies with this request in flight
          await Promise.resolve();
          return alive() ? { kind: 'delivered' as const } : never();
        },
      },
      now: () => clock.now,
      random: () => 0.5,
    };
    return new PollerEngine(context, { set: async () => {} });
  };
  const settle = async (engine: PollerEngine) => {
    for (let run = 0; run < 12; run += 1) {
      const before = receiver.got.size;
      clock.now += MINUTE;
      const reply = await engine.runNow('manual');
      const outcome = reply.outcome === 'ran' ? reply.run.outcome : reply.outcome;
      if (outcome === 'success' && receiver.got.size === before) return;
    }
  };

  if (!world.diesFirst) await settle(engineOf(0));
  world.change('before');
  armed = true;
  clock.now += MINUTE;
  const run = engineOf(0)
    .runNow('manual')
    .then(
      () => 'ended' as const,
      (error: unknown) => {
        if (error instanceof Crash) return 'ended' as const;
        throw error;
      },
    );
  await Promise.race([run, death]);
  const crashed = instance > 0;
  armed = false;
  if (crashed) {
    world.change('while dead');
    clock.now += config.lease_ttl + MINUTE; // the lease expires; the alarm recovers
    const fresh = engineOf(instance);
    await fresh.onAlarm();
    await settle(fresh);
  } else {
    await settle(engineOf(0));
  }
  return {
    crashed,
    redeliveries: receiver.redeliveries,
    lost: receiver.lost(world.upstream()),
    requests,
    passed,
    diedAt,
  };
}

/** A trial at every point of `kind` (1, 2, … until the run ends before one). */
export async function sweepEvery(
  make: () => SweepWorld,
  kind: CrashKind,
  options: SweepOptions,
): Promise<Trial[]> {
  const trials: Trial[] = [];
  for (let index = 1; ; index += 1) {
    const trial = await crashTrial(make, { kind, index }, options);
    if (!trial.crashed) return trials;
    trials.push(trial);
  }
}
