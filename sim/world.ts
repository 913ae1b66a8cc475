import type { DeliveryResult } from '../src/engine/classify.ts';
import type { DeliveryItem, PageResult, PollerStore, Update } from '../src/engine/ports.ts';
import type { Window } from '../src/engine/window.ts';
import type { VirtualClock } from './clock.ts';
import { chance, seededRandom } from './random.ts';

/** The faults of a scenario; each is a rate or a size, set on the command line. */
export interface Faults {
  /** Cron interval. */
  intervalMs: number;
  /** Cron ticks simulated (then a quiet drain, so that correct strategies can catch up). */
  ticks: number;
  updatesPerTick: number;
  /** Downtime gaps: [first tick, number of ticks]; no cron and no alarm runs in a gap. */
  downtime: [number, number][];
  /** Replication lag: an update happening at t is visible at t + random(0…lagMs). */
  lagMs: number;
  /** When set, the lag's bound grows linearly from lagMs (first tick) to this (last tick). */
  lagEndMs?: number;
  /** tidemark's lag_allowance; by default it covers lagMs and a clock behind (docs/configuration.md's advice). */
  lagAllowanceMs?: number;
  /** Share of delivery attempts that fail (a 503). */
  transientRate: number;
  /** Share of updates the receiver always refuses (a 422). */
  poisonRate: number;
  /** Share of page requests that fail (a 500). */
  pageFailRate: number;
  /** Chance of a crash at each await point of a run (the instance dies, storage survives). */
  crashRate: number;
  /** Chance that a cron tick fires twice at once. */
  duplicateCronRate: number;
  /** Chance that a run's pages are slow (×slowFactor): long runs that outlive the interval. */
  slowRate: number;
  slowFactor: number;
  pageLatencyMs: number;
  deliveryLatencyMs: number;
  /** The upstream's clock minus the Worker's (negative: behind). */
  skewMs: number;
  /** Chance that an update shares the previous update's timestamp. */
  tieRate: number;
  pageSize: number;
}

export const DEFAULT_FAULTS: Faults = {
  intervalMs: 60_000,
  ticks: 120,
  updatesPerTick: 8,
  downtime: [],
  lagMs: 0,
  transientRate: 0,
  poisonRate: 0,
  pageFailRate: 0,
  crashRate: 0,
  duplicateCronRate: 0,
  slowRate: 0,
  slowFactor: 40,
  pageLatencyMs: 200,
  deliveryLatencyMs: 50,
  skewMs: 0,
  tieRate: 0.1,
  pageSize: 10,
};

export const START = Date.parse('2026-06-01T00:00:00Z');

/** The replication lag's bound at a tick: lagMs, or growing towards lagEndMs. */
export function lagBound(faults: Faults, tick: number): number {
  if (faults.lagEndMs === undefined) return faults.lagMs;
  return faults.lagMs + ((faults.lagEndMs - faults.lagMs) * tick) / Math.max(1, faults.ticks - 1);
}

/** One update of the simulated upstream, with when it happened and when it became visible. */
export interface SimUpdate extends Update {
  happenedAt: number;
  visibleAt: number;
}

/** Thrown at an await point of a crashed instance: the run is gone, storage is not. */
export class Crash extends Error {}

/**
 * Storage as one instance sees it: once that instance has died, every call throws a Crash.
 * A dead isolate runs no more code, so a catch in the run must not get to write anything.
 */
export function storeOfInstance<T extends object = PollerStore>(store: T, alive: () => boolean): T {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!alive()) throw new Crash('instance gone');
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/**
 * The simulated upstream and receiver. Everything random is drawn from the seed up front, or
 * from `chance(seed, event)`, so every strategy faces the same updates and the same faults.
 */
export class World {
  readonly updates: SimUpdate[] = [];
  /** First delivery time of each `(id, version)`, and how often each was delivered. */
  readonly firstDelivered = new Map<string, number>();
  readonly deliveries = new Map<string, number>();
  readonly trace: string[] = [];
  private readonly attempts = new Map<string, number>();
  private pageRequests = 0;

  constructor(
    readonly seed: number,
    readonly faults: Faults,
    readonly clock: VirtualClock,
  ) {
    const random = seededRandom(seed);
    const seen = new Set<string>();
    let previous: { happenedAt: number } | null = null;
    for (let tick = 0; tick < faults.ticks; tick += 1) {
      const count = Math.round(faults.updatesPerTick * (0.5 + random()));
      for (let i = 0; i < count; i += 1) {
        // A tie is a second update at the very same instant as the one before (same stamp).
        const tie: boolean = random() < faults.tieRate && previous !== null;
        const happenedAt: number =
          tie && previous
            ? previous.happenedAt
            : START + tick * faults.intervalMs + Math.floor(random() * faults.intervalMs);
        const versionMs = happenedAt + faults.skewMs;
        previous = { happenedAt };
        const id = `r${Math.floor(random() * 60)}`;
        const version = new Date(versionMs).toISOString();
        if (seen.has(`${id}@${version}`)) continue;
        seen.add(`${id}@${version}`);
        const visibleAt = happenedAt + Math.floor(random() * lagBound(faults, tick));
        this.updates.push({
          id,
          version,
          versionMs,
          record: { id, updated_at: version },
          happenedAt,
          visibleAt,
        });
      }
    }
    this.updates.sort((a, b) => a.versionMs - b.versionMs || a.id.localeCompare(b.id));
  }

  log(line: string): void {
    if (this.trace.length < 5_000)
      this.trace.push(`${new Date(this.clock.now).toISOString()} ${line}`);
  }

  isPoison(update: Update): boolean {
    return chance(this.seed, 'poison', update.id, update.version) < this.faults.poisonRate;
  }

  /** One page of updates stamped in the window and visible now, oldest first. */
  async fetchPage(window: Window, cursor: string | null, slow: boolean): Promise<PageResult> {
    const request = this.pageRequests++;
    await this.clock.sleep(this.faults.pageLatencyMs * (slow ? this.faults.slowFactor : 1));
    if (chance(this.seed, 'page', request) < this.faults.pageFailRate) {
      return { ok: false, kind: 'transient', error: 'HTTP 500 (simulated)' };
    }
    const now = this.clock.now;
    const offset = Number(cursor ?? 0);
    const matching = this.updates.filter(
      (u) =>
        u.versionMs >= window.from &&
        (!window.bounded || u.versionMs < window.to) &&
        u.visibleAt <= now,
    );
    const page = matching.slice(offset, offset + this.faults.pageSize);
    const next =
      offset + this.faults.pageSize < matching.length
        ? String(offset + this.faults.pageSize)
        : null;
    return { ok: true, updates: page, malformed: [], next };
  }

  /** Delivers a batch: a poison update is always refused; others fail at the transient rate. */
  async deliver(items: DeliveryItem[]): Promise<DeliveryResult> {
    await this.clock.sleep(this.faults.deliveryLatencyMs);
    for (const { update, idempotencyKey } of items) {
      if (this.isPoison(update)) return { kind: 'rejected', error: 'HTTP 422 (simulated poison)' };
      const attempt = (this.attempts.get(idempotencyKey) ?? 0) + 1;
      this.attempts.set(idempotencyKey, attempt);
      if (chance(this.seed, 'deliver', idempotencyKey, attempt) < this.faults.transientRate) {
        return { kind: 'retry', error: 'HTTP 503 (simulated)' };
      }
    }
    for (const { update } of items) {
      const key = `${update.id}@${update.version}`;
      this.deliveries.set(key, (this.deliveries.get(key) ?? 0) + 1);
      if (!this.firstDelivered.has(key)) this.firstDelivered.set(key, this.clock.now);
    }
    return { kind: 'delivered' };
  }

  isDown(tick: number): boolean {
    return this.faults.downtime.some(([start, length]) => tick >= start && tick < start + length);
  }
}
