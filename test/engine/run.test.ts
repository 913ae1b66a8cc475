import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../sim/random.ts';
import { Crash, storeOfInstance } from '../../sim/world.ts';
import { loadPoller } from '../../src/config/load.ts';
import type { PollerConfig } from '../../src/config/schema.ts';
import type { DeliveryResult } from '../../src/engine/classify.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import {
  type Deliverer,
  type DeliveryItem,
  ledgerKey,
  type PageResult,
  type RunContext,
  type Source,
  type Update,
} from '../../src/engine/ports.ts';
import { MAX_RETRYING } from '../../src/engine/retrying.ts';
import { stepPrecision, type Window } from '../../src/engine/window.ts';

const MINUTE = 60_000;

interface WorldOptions {
  seed: number;
  /** Longest visibility delay of an update (replication lag). */
  lagMs: number;
  pageFailRate: number;
  deliveryFailRate: number;
  crashRate: number;
  /** Also crash at exactly these await points (counted from the start of the world). */
  crashAt?: number[];
  bounded: boolean;
  /** The poller is told the upstream returns records oldest first (it does). */
  sorted?: boolean;
  /** Share of good pages that also say the rate-limit quota is spent for a while. */
  pauseRate?: number;
  /** The upstream stamps whole seconds and truncates `from` to the second. */
  wholeSeconds?: boolean;
}

/** A simulated upstream, receiver and clock driving the real engine. */
class World implements Source, Deliverer {
  now = WORLD_START;
  readonly random: () => number;
  readonly updates: (Update & { visibleAt: number })[] = [];
  readonly delivered = new Set<string>();
  deliveries = 0;
  private nextId = 0;

  constructor(readonly options: WorldOptions) {
    this.random = seededRandom(options.seed);
  }

  /** Produces updates stamped in [now, now + span): the time about to pass. Some share a timestamp. */
  produce(count: number, span: number): void {
    let last = this.now;
    for (let i = 0; i < count; i += 1) {
      const raw = this.random() < 0.2 ? last : this.now + Math.floor(this.random() * span);
      const stamp = this.options.wholeSeconds ? Math.floor(raw / 1000) * 1000 : raw;
      last = stamp;
      const id = `r${this.random() < 0.3 && this.nextId > 0 ? Math.floor(this.random() * this.nextId) : this.nextId++}`;
      const version = new Date(stamp).toISOString();
      this.updates.push({
        id,
        version,
        versionMs: stamp,
        record: { id, updated_at: version },
        visibleAt: raw + Math.floor(this.random() * this.options.lagMs),
      });
    }
  }

  private steps = 0;
  /** The instance running now has crashed; the next invocation starts a new one. */
  dead = false;

  private step(): void {
    this.now += 1 + Math.floor(this.random() * 200);
    this.steps += 1;
    if (this.options.crashAt?.includes(this.steps) || this.random() < this.options.crashRate) {
      // A crash at an await point: the run never returns, as after an eviction, and its
      // instance can no longer touch storage (the next trigger or alarm is a new instance).
      this.dead = true;
      throw new Crash('crash');
    }
  }

  async fetchPage(window: Window, cursor: string | null): Promise<PageResult> {
    this.step();
    if (this.random() < this.options.pageFailRate) {
      return { ok: false, kind: 'transient', error: 'HTTP 500' };
    }
    const from = this.options.wholeSeconds ? Math.floor(window.from / 1000) * 1000 : window.from;
    const offset = Number(cursor ?? 0);
    const matching = this.updates
      .filter(
        (u) =>
          u.versionMs >= from &&
          (!window.bounded || u.versionMs < window.to) &&
          u.visibleAt <= this.now,
      )
      .sort((a, b) => a.versionMs - b.versionMs || a.id.localeCompare(b.id));
    const page = matching.slice(offset, offset + 4);
    const next = offset + 4 < matching.length ? String(offset + 4) : null;
    const pause =
      next !== null && this.random() < (this.options.pauseRate ?? 0)
        ? { pauseUntil: this.now + Math.floor(this.random() * 30_000) }
        : {};
    return { ok: true, updates: page, malformed: [], next, ...pause };
  }

  async deliver(items: DeliveryItem[]): Promise<DeliveryResult> {
    this.step();
    if (this.random() < this.options.deliveryFailRate) return { kind: 'retry', error: 'HTTP 503' };
    for (const { update } of items) {
      this.deliveries += 1;
      this.delivered.add(`${update.id}@${update.version}`);
    }
    return { kind: 'delivered' };
  }
}

const WORLD_START = Date.parse('2026-06-01T00:00:00Z');

/** A page of the world's updates from `window.from`, `size` at a time, in `order` of version. */
function listing(
  world: World,
  window: Window,
  cursor: string | null,
  size: number,
  order: 'oldest-first' | 'newest-first',
): PageResult & { ok: true } {
  const sign = order === 'oldest-first' ? 1 : -1;
  const all = world.updates
    .filter((u) => u.versionMs >= window.from)
    .sort((a, b) => sign * (a.versionMs - b.versionMs));
  const offset = Number(cursor ?? 0);
  const next = offset + size < all.length ? String(offset + size) : null;
  return { ok: true, updates: all.slice(offset, offset + size), malformed: [], next };
}

function config(
  bounded: boolean,
  lagAllowance: number,
  maxSubrequests = 200,
  sorted = false,
): PollerConfig {
  const entry = loadPoller(
    'sim',
    {
      cron: '* * * * *',
      start_from: new Date(WORLD_START).toISOString(),
      lag_allowance: `${lagAllowance}ms`,
      ...(bounded ? { max_window: '20m' } : {}),
      max_subrequests: maxSubrequests,
      source: {
        url: 'https://sim.test/x',
        from_param: 'from',
        ...(bounded ? { to_param: 'to' } : {}),
        ...(sorted ? { sorted: 'asc' } : {}),
        next: { type: 'cursor', param: 'cursor', path: 'next' },
      },
      deliver: { type: 'handler', name: 'sim' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry.config;
}

/** The engine wired to a world: its clock, randomness, upstream and receiver unless overridden. */
function engineIn(world: World, store: MemoryStore, overrides: Partial<RunContext> = {}) {
  const context: RunContext = {
    poller: 'sim',
    config: config(world.options.bounded, world.options.lagMs),
    store: storeOfInstance(store, () => !world.dead),
    source: world,
    deliverer: world,
    now: () => world.now,
    random: world.random,
    ...overrides,
  };
  let alarmAt: number | null = null;
  const engine = new PollerEngine(context, {
    set: async (at) => {
      alarmAt = at;
    },
  });
  return { engine, alarmAt: () => alarmAt };
}

/** Runs `ticks` cron intervals (with downtime) and the alarms between them; returns the final state. */
async function simulate(
  options: WorldOptions,
  ticks: number,
  downtime: Set<number>,
  maxSubrequests = 200,
) {
  const world = new World(options);
  const store = new MemoryStore();
  const { engine, alarmAt } = engineIn(world, store, {
    // docs/configuration.md: lag_allowance covers the worst visibility delay plus the timestamp granularity.
    config: config(
      options.bounded,
      options.lagMs + (options.wholeSeconds ? 1_000 : 0),
      maxSubrequests,
      options.sorted,
    ),
  });
  const guard = async (work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (error) {
      if (!(error instanceof Crash)) throw error;
    } finally {
      world.dead = false; // the next trigger or alarm runs in a fresh instance
    }
  };
  for (let tick = 0; tick < ticks; tick += 1) {
    const tickEnd = world.now + MINUTE;
    world.produce(Math.floor(world.random() * 12), MINUTE);
    // Alarms due before the next tick (retries, continuations, lease expiries).
    for (let steps = 0; steps < 200; steps += 1) {
      const due = alarmAt();
      if (due === null || due > tickEnd) break;
      world.now = Math.max(world.now, due);
      await guard(() => engine.onAlarm());
    }
    world.now = Math.max(world.now, tickEnd);
    if (!downtime.has(tick)) {
      await guard(async () => {
        await engine.trigger('cron');
        await engine.onAlarm();
      });
    }
  }
  return { world, store };
}

/** The invariant of SEMANTICS.md: every update below C was delivered, is a dead letter, or is stored as failing (R19). */
function lostBelowCheckpoint(world: World, store: MemoryStore): string[] {
  const checkpoint = store.read().checkpoint ?? Number.NEGATIVE_INFINITY;
  return world.updates
    .filter(
      (u) =>
        u.versionMs < checkpoint &&
        !world.delivered.has(`${u.id}@${u.version}`) &&
        !store.deadLetters.has(`sim:${u.id}:${u.version}`) &&
        !store.failing().has(`sim:${u.id}:${u.version}`),
    )
    .map((u) => `${u.id}@${u.version}`);
}

describe('the run loop against a faulty simulated world', () => {
  it('never leaves an undelivered update below C, whatever the faults (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          seed: fc.integer(),
          lagMs: fc.integer({ min: 0, max: 20_000 }),
          pageFailRate: fc.double({ min: 0, max: 0.3, noNaN: true }),
          deliveryFailRate: fc.double({ min: 0, max: 0.3, noNaN: true }),
          crashRate: fc.double({ min: 0, max: 0.05, noNaN: true }),
          bounded: fc.boolean(),
          sorted: fc.boolean(),
          pauseRate: fc.double({ min: 0, max: 0.2, noNaN: true }),
          wholeSeconds: fc.boolean(),
        }),
        fc.uniqueArray(fc.integer({ min: 0, max: 39 }), { maxLength: 30 }),
        fc.integer({ min: 3, max: 200 }),
        async (options, down, maxSubrequests) => {
          const { world, store } = await simulate(options, 40, new Set(down), maxSubrequests);
          expect(lostBelowCheckpoint(world, store)).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('catches up after long downtime, and recovers crashed runs through the lease alarm', async () => {
    const options = {
      seed: 7,
      lagMs: 5_000,
      pageFailRate: 0.01,
      deliveryFailRate: 0.05,
      crashRate: 0,
      crashAt: [40, 400],
      bounded: true,
    };
    const down = new Set(Array.from({ length: 25 }, (_, i) => i + 5)); // 25 minutes without cron
    const { world, store } = await simulate(options, 120, down, 60);
    expect(lostBelowCheckpoint(world, store)).toEqual([]);
    expect(store.recoveries).toBeGreaterThan(0);
    expect(store.runs.some((r) => r.outcome === 'continued')).toBe(true);
    // Caught up: C is within a few minutes of the end, and almost everything was delivered.
    expect(world.now - (store.read().checkpoint ?? 0)).toBeLessThan(5 * MINUTE);
  });

  it('delivers updates written while a request was in flight, which an end-time checkpoint would skip', async () => {
    const options = {
      seed: 11,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: false,
    };
    const world = new World(options);
    const store = new MemoryStore();
    const { engine } = engineIn(world, store);
    // Updates written while each request is in flight: stamped after T, before the run ends.
    const inFlight: { stamp: number; runEnd: () => number }[] = [];
    const originalFetch = world.fetchPage.bind(world);
    world.fetchPage = async (window, cursor) => {
      const page = await originalFetch(window, cursor);
      const before = world.updates.length;
      world.produce(3, 50);
      for (const update of world.updates.slice(before)) {
        inFlight.push({
          stamp: update.versionMs,
          runEnd: () => store.runs.at(-1)?.finishedAt ?? 0,
        });
      }
      return page;
    };
    for (let tick = 0; tick < 20; tick += 1) {
      world.now += MINUTE;
      await engine.trigger('cron');
      await engine.onAlarm();
    }
    // The next run's start time would have been past some of them: C = end time skips those.
    expect(inFlight.some((u) => u.stamp < u.runEnd())).toBe(true);
    expect(lostBelowCheckpoint(world, store)).toEqual([]);
  });
});

describe('max_run (R7)', () => {
  it('stops a run that reaches max_run between windows and books a continuation', async () => {
    const options = {
      seed: 3,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: true,
    };
    const world = new World(options);
    const store = new MemoryStore();
    const slowConfig = { ...config(true, 0), max_subrequests: 10_000 };
    const { engine } = engineIn(world, store, {
      config: slowConfig,
      source: {
        fetchPage: async (window, cursor) => {
          world.now += 4 * MINUTE; // a slow upstream: each page takes four minutes
          return world.fetchPage(window, cursor);
        },
      },
    });
    store.state.checkpoint = world.now - 6 * 60 * MINUTE;
    await engine.trigger('cron');
    const run = await engine.onAlarm();
    expect(run?.outcome).toBe('continued');
    expect(run?.error).toContain('max_run');
    expect(run?.windows).toBe(3); // 3 windows × 4 minutes ≥ 10 minutes
    expect(store.read().wakeup?.reason).toBe('continuation');
  });
});

describe('backoff and progress (R12)', () => {
  it('grows the backoff only while runs deliver nothing', async () => {
    const options = {
      seed: 5,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: false,
    };
    const world = new World(options);
    const store = new MemoryStore();
    const poison = 'r-poison';
    const { engine } = engineIn(world, store, {
      config: { ...config(false, 0), max_attempts: 100 }, // no dead letters: this is about backoff
      deliverer: {
        deliver: async (items) =>
          items.some((item) => item.update.id === poison)
            ? { kind: 'retry', error: 'HTTP 503' }
            : world.deliver(items),
      },
    });
    const push = (id: string) => {
      const stamp = world.now + 1_000; // before the next run's start
      world.updates.push({
        id,
        version: new Date(stamp).toISOString(),
        versionMs: stamp,
        record: {},
        visibleAt: 0,
      });
    };
    const run = async () => {
      world.now += MINUTE;
      await engine.trigger('manual');
      await engine.onAlarm();
      return store.read().failures;
    };
    push(poison);
    push('a');
    expect(await run()).toBe(1); // a delivered, the poison update stored as failing (R19)
    expect(await run()).toBe(2); // nothing new, the poison update failed again
    expect(await run()).toBe(3);
    expect(await run()).toBe(4); // backing off further: nothing is happening
    push('b');
    expect(await run()).toBe(1); // b delivered: back to the base delay
    expect(await run()).toBe(2);
  });
});

describe('windows that end, start and stop where they should', () => {
  it('a caught-up bounded window on whole seconds ends the run: no endless continuation', async () => {
    const options = {
      seed: 9,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: true,
    };
    const world = new World(options);
    const store = new MemoryStore();
    const { engine } = engineIn(world, store, {
      precision: stepPrecision(1000),
      config: config(true, 1_000),
    });
    world.now += 10 * MINUTE + 750;
    await engine.trigger('cron');
    const first = await engine.onAlarm(); // catches up 10 minutes of nothing
    world.now += MINUTE + 333;
    await engine.trigger('cron');
    const steady = await engine.onAlarm();
    expect(first?.outcome).toBe('success');
    expect(steady?.outcome).toBe('success');
    expect(steady?.windows).toBe(1);
    expect(store.read().wakeup).toBeNull();
  });

  it('fails a newest-first window that is too big for a run, even while new records keep arriving', async () => {
    const options = {
      seed: 4,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: false,
    };
    const world = new World(options);
    const store = new MemoryStore();
    for (let i = 0; i < 120; i += 1) {
      world.updates.push({
        id: `old${i}`,
        version: `v${i}`,
        versionMs: WORLD_START + i,
        record: {},
        visibleAt: 0,
      });
    }
    const newestFirst: Source = {
      fetchPage: async (window, cursor) => {
        // One new record arrives at the front of the listing before every request.
        world.now += 10;
        world.updates.push({
          id: `new${world.now}`,
          version: 'n',
          versionMs: world.now - 5,
          record: {},
          visibleAt: 0,
        });
        return listing(world, window, cursor, 4, 'newest-first');
      },
    };
    const { engine } = engineIn(world, store, {
      source: newestFirst,
      config: config(false, 0, 20),
    });
    world.now += MINUTE;
    await engine.trigger('cron');
    const outcomes: string[] = [];
    for (let step = 0; step < 30 && store.read().wakeup?.reason !== 'retry'; step += 1) {
      const run = await engine.onAlarm();
      outcomes.push(run?.outcome ?? 'none');
    }
    expect(outcomes.at(-1)).toBe('failed');
    expect(store.runs.at(-1)?.error).toContain('is too big for one run');
    expect(store.read().wakeup?.failure).toBe('misconfigured');
    expect(outcomes.filter((o) => o === 'continued').length).toBeLessThan(10);
  });

  it('stores the first run’s start as C even when that run fails', async () => {
    const options = {
      seed: 2,
      lagMs: 0,
      pageFailRate: 1,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: false,
    };
    const world = new World(options);
    const store = new MemoryStore();
    const { engine } = engineIn(world, store, {
      config: { ...config(false, 0), start_from: undefined },
    });
    world.now += MINUTE;
    const firstStart = world.now;
    await engine.trigger('cron');
    const run = await engine.onAlarm();
    expect(run?.outcome).toBe('failed');
    expect(store.read().checkpoint).toBe(firstStart);
  });
});

describe('failing versions and the order of versions per id', () => {
  const options = {
    seed: 21,
    lagMs: 0,
    pageFailRate: 0,
    deliveryFailRate: 0,
    crashRate: 0,
    bounded: false,
  };
  const run = async (engine: PollerEngine, world: World) => {
    world.now += MINUTE;
    await engine.trigger('manual');
    return engine.onAlarm();
  };
  const add = (world: World, id: string, at: number) =>
    world.updates.push({
      id,
      version: new Date(at).toISOString(),
      versionMs: at,
      record: { id },
      visibleAt: 0,
    });

  it('does not deliver a dead-lettered update again when an overlapping window asks for it', async () => {
    const world = new World(options);
    const store = new MemoryStore();
    const sent: string[] = [];
    const { engine } = engineIn(world, store, {
      config: { ...config(false, 0), max_attempts: 1, overlap: 5 * MINUTE },
      deliverer: {
        deliver: async (items) => {
          sent.push(...items.map((item) => item.update.id));
          return items.some((item) => item.update.id === 'bad')
            ? { kind: 'rejected', error: '422' }
            : { kind: 'delivered' };
        },
      },
    });
    add(world, 'bad', WORLD_START + 10_000);
    await run(engine, world); // dead letter, C moves on
    await run(engine, world); // the overlap asks for it again
    expect(sent.filter((id) => id === 'bad')).toHaveLength(1);
    expect(store.deadLetters.size).toBe(1);
  });

  it('holds a newer version on a later page while an older one of its id is failing', async () => {
    const world = new World(options);
    const store = new MemoryStore();
    const sent: string[] = [];
    let failOnce = true;
    const pages: Source = {
      fetchPage: async (window, cursor) => {
        return listing(world, window, cursor, 1, 'oldest-first');
      },
    };
    const { engine } = engineIn(world, store, {
      source: pages,
      deliverer: {
        deliver: async (items) => {
          const [item] = items;
          if (item?.update.version === new Date(WORLD_START + 1_000).toISOString() && failOnce) {
            failOnce = false;
            return { kind: 'retry', error: '503' };
          }
          sent.push(item?.update.version ?? '');
          return { kind: 'delivered' };
        },
      },
    });
    add(world, 'x', WORLD_START + 1_000);
    add(world, 'x', WORLD_START + 2_000);
    await run(engine, world);
    // x@2's page came after x@1 had failed in this run: x@2 waits behind it, stored, and x@1
    // is not tried twice in one run (R19).
    expect(sent).toEqual([]);
    expect([...store.failing().values()].map((f) => [f.versionMs, f.attempts])).toEqual([
      [WORLD_START + 1_000, 1],
      [WORLD_START + 2_000, 0],
    ]);
    world.updates.length = 0; // both go from their stored records
    await run(engine, world);
    // Never x@2 before x@1.
    expect(sent).toEqual([
      new Date(WORLD_START + 1_000).toISOString(),
      new Date(WORLD_START + 2_000).toISOString(),
    ]);
    expect(store.failing().size).toBe(0);
  });

  it('keeps retrying a failing version the upstream stops showing, from its record, until it is a dead letter', async () => {
    const world = new World(options);
    const store = new MemoryStore();
    const { engine } = engineIn(world, store, {
      deliverer: {
        deliver: async (items) =>
          items.some((item) => item.update.id === 'x')
            ? { kind: 'retry', error: '503' }
            : { kind: 'delivered' },
      },
    });
    add(world, 'x', WORLD_START + 1_000);
    await run(engine, world); // x@1 fails
    world.updates.length = 0; // the record is gone upstream
    for (let attempt = 2; attempt <= 4; attempt += 1) {
      await run(engine, world);
      // C moves on (R19) while the version stays stored as failing, with its attempts.
      expect(store.read().checkpoint).toBeGreaterThan(WORLD_START + 1_000);
      expect([...store.failing().values()].map((f) => f.attempts)).toEqual([attempt]);
      expect(store.deadLetters.size).toBe(0);
    }
    await run(engine, world); // attempt 5: a dead letter, and C moves on
    const [letter] = store.deadLetters.values();
    expect(letter).toMatchObject({ id: 'x', versionMs: WORLD_START + 1_000, attempts: 5 });
    expect(store.read().checkpoint).toBeGreaterThan(WORLD_START + 1_000);
  });

  it('spends one attempt per run on a failing version, however many pages of the window show its id again', async () => {
    const world = new World(options);
    const store = new MemoryStore();
    const tries: number[] = []; // the attempt number of each try of x@1
    const x1 = new Date(WORLD_START + 2_000).toISOString();
    const { engine } = engineIn(world, store, {
      // The overlap shows x@1 again, on a later page than the first, in the next run's window.
      config: { ...config(false, 0), overlap: 5 * MINUTE },
      deliverer: {
        deliver: async (items) => {
          for (const item of items) if (item.update.version === x1) tries.push(item.attempt);
          return items.some((item) => item.update.id === 'x')
            ? { kind: 'retry', error: 'HTTP 500' }
            : { kind: 'delivered' };
        },
      },
    });
    for (let i = 0; i < 6; i += 1) add(world, `f${i}`, WORLD_START + 1_000 + i);
    add(world, 'x', WORLD_START + 2_000);
    // Newer versions of x on later pages (4 records a page), as a busy id has: each waits
    // behind x@1 (stored), and none may send x@1 again within the run.
    for (let i = 1; i <= 3; i += 1) {
      for (let j = 0; j < 4; j += 1) add(world, `g${i}${j}`, WORLD_START + 2_000 + i * 1_000 + j);
      add(world, 'x', WORLD_START + 2_500 + i * 1_000);
    }

    expect((await run(engine, world))?.outcome).toBe('partial');
    expect(tries).toEqual([1]);
    expect(store.failing().get(`sim:x:${x1}`)?.attempts).toBe(1);
    expect(store.deadLetters.size).toBe(0);

    // The next run retries it first (its window's first page), and not again on the page
    // where the overlap shows it, nor in front of its newer versions.
    expect((await run(engine, world))?.outcome).toBe('partial');
    expect(tries).toEqual([1, 2]);
    expect(store.failing().get(`sim:x:${x1}`)?.attempts).toBe(2);
  });

  it('stores a version held behind a failing one, so it is not lost if the upstream moves past it', async () => {
    const world = new World(options);
    const store = new MemoryStore();
    let xFails = true;
    const sent: number[] = [];
    const { engine } = engineIn(world, store, {
      deliverer: {
        deliver: async (items) => {
          if (xFails && items.some((item) => item.update.versionMs === WORLD_START + 1_000))
            return { kind: 'retry', error: '503' };
          sent.push(...items.map((item) => item.update.versionMs));
          return { kind: 'delivered' };
        },
      },
    });
    add(world, 'x', WORLD_START + 1_000);
    await run(engine, world); // x@1 fails
    world.updates.length = 0;
    add(world, 'x', WORLD_START + 70_000); // held behind x@1
    await run(engine, world);
    world.updates.length = 0;
    add(world, 'x', WORLD_START + 130_000); // the upstream moved past x@70
    xFails = false;
    await run(engine, world);
    expect(sent).toEqual([WORLD_START + 1_000, WORLD_START + 70_000, WORLD_START + 130_000]);
  });

  it('retries a failing version from its stored record when only a newer one is shown, then moves on', async () => {
    const world = new World(options);
    const store = new MemoryStore();
    const sent: number[] = [];
    const { engine } = engineIn(world, store, {
      deliverer: {
        deliver: async (items) => {
          if (items.some((item) => item.update.versionMs === WORLD_START + 1_000))
            return { kind: 'retry', error: '503' };
          sent.push(...items.map((item) => item.update.versionMs));
          return { kind: 'delivered' };
        },
      },
    });
    add(world, 'x', WORLD_START + 1_000);
    await run(engine, world);
    world.updates.length = 0;
    add(world, 'x', WORLD_START + 70_000); // the upstream shows only the newer version now
    for (let i = 0; i < 6; i += 1) await run(engine, world);
    expect([...store.deadLetters.values()].map((letter) => letter.attempts)).toEqual([5]);
    expect(sent).toEqual([WORLD_START + 70_000]); // after x@1 was settled, never before
    expect(store.read().checkpoint).toBeGreaterThan(WORLD_START + 70_000);
  });

  it('tries each record of a rejected batch alone, so only the bad one counts an attempt', async () => {
    const world = new World(options);
    const store = new MemoryStore();
    const { engine } = engineIn(world, store, {
      config: {
        ...config(false, 0),
        max_attempts: 1,
        deliver: {
          type: 'webhook',
          url: 'https://receiver.test/hooks',
          secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          batch: 10,
          timeout: 30_000,
          concurrency: 6,
          changes_only: false,
          changes_ignore: [],
        },
      },
      deliverer: {
        deliver: async (items) =>
          items.some((item) => item.update.id === 'bad')
            ? { kind: 'rejected', error: '422' }
            : world.deliver(items),
      },
    });
    for (const id of ['a', 'b', 'bad', 'c']) add(world, id, WORLD_START + 1_000);
    await run(engine, world);
    expect([...store.deadLetters.values()].map((letter) => letter.id)).toEqual(['bad']);
    expect([...world.delivered].sort()).toEqual(
      ['a', 'b', 'c'].map((id) => `${id}@${new Date(WORLD_START + 1_000).toISOString()}`),
    );
  });
});

describe('pause between the grant and the start', () => {
  it('does not start the run and gives the lease back', async () => {
    const world = new World({
      seed: 8,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: false,
    });
    const store = new MemoryStore();
    const { engine } = engineIn(world, store);
    world.now += MINUTE;
    expect((await engine.trigger('cron')).outcome).toBe('started');
    store.state.paused = true; // an admin pauses before the alarm fires
    expect(await engine.onAlarm()).toBeNull();
    expect(store.read().lease.held).toBe(false);
    expect(store.runs.filter((run) => run.outcome !== 'skipped')).toEqual([]);
  });
});

describe('continuations that stop when there is nothing more to gain', () => {
  it('does not keep continuing a caught-up bounded window whose lag_allowance exceeds max_window', async () => {
    const world = new World({
      seed: 31,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: true,
    });
    const store = new MemoryStore();
    const base = config(true, 10 * MINUTE);
    const { engine } = engineIn(world, store, { config: { ...base, max_window: 5 * MINUTE } });
    world.now += 2 * 60 * MINUTE;
    await engine.trigger('cron');
    await engine.onAlarm(); // catches up two hours, window by window
    world.now += MINUTE;
    await engine.trigger('cron');
    const steady = await engine.onAlarm();
    expect(steady?.outcome).toBe('success');
    expect(steady?.windows).toBeLessThanOrEqual(2);
    expect(store.read().wakeup).toBeNull();
  });

  it('fails a window that needs more pages than the rate limit allows between resets, instead of looping', async () => {
    const world = new World({
      seed: 32,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: false,
    });
    for (let i = 0; i < 12; i += 1) {
      world.updates.push({
        id: `r${i}`,
        version: `v${i}`,
        versionMs: WORLD_START + i * 1_000,
        record: {},
        visibleAt: 0,
      });
    }
    const store = new MemoryStore();
    let inQuota = 0;
    const limited: Source = {
      fetchPage: async (window, cursor) => {
        inQuota += 1;
        const spent = inQuota % 2 === 0 ? { pauseUntil: world.now + MINUTE } : {};
        return { ...listing(world, window, cursor, 4, 'newest-first'), ...spent };
      },
    };
    const { engine } = engineIn(world, store, { source: limited });
    const outcomes: string[] = [];
    world.now += MINUTE;
    await engine.trigger('cron');
    for (let step = 0; step < 12 && store.read().wakeup?.reason !== 'retry'; step += 1) {
      world.now = Math.max(world.now, store.read().wakeup?.at ?? world.now);
      outcomes.push((await engine.onAlarm())?.outcome ?? 'none');
    }
    expect(outcomes.at(-1)).toBe('failed');
    expect(store.runs.at(-1)?.error).toContain("stopped on the upstream's rate limit");
    expect(store.runs.at(-1)?.error).toContain('is too big for one run');
  });
});

describe('errors nobody expected', () => {
  it('end as a failed run in the history, with the lease released and a retry booked', async () => {
    const world = new World({
      seed: 21,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: false,
    });
    const store = new MemoryStore();
    const { engine, alarmAt } = engineIn(world, store, {
      source: {
        fetchPage: async () => {
          throw new TypeError('Invalid URL: https://exa mple.com/');
        },
      },
    });
    store.state.checkpoint = world.now - MINUTE;

    await engine.trigger('cron');
    const run = await engine.onAlarm();

    expect(run).toMatchObject({ outcome: 'failed', trigger: 'cron' });
    expect(run?.error).toContain('the run failed unexpectedly: TypeError: Invalid URL');
    expect(store.runs.at(-1)?.outcome).toBe('failed');
    const state = store.read();
    expect(state.lease.held).toBe(false);
    expect(state.failures).toBe(1);
    expect(state.wakeup).toMatchObject({ reason: 'retry', failure: 'transient' });
    expect(alarmAt()).toBe(state.wakeup?.at);
    expect(state.checkpoint).toBe(world.now - MINUTE);
  });
});

describe('stale failures', () => {
  it('a failure of a version the ledger already holds is dropped, so newer versions of its id are not held back', async () => {
    const world = new World({
      seed: 23,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: false,
    });
    const store = new MemoryStore();
    const { engine } = engineIn(world, store);
    const at = (offset: number) => world.now + offset;
    store.state.checkpoint = at(-MINUTE);
    // v1 was dead-lettered (so it is in the ledger), and a repeat of it failed afterwards.
    const v1 = { id: 'x', version: new Date(at(-30_000)).toISOString(), versionMs: at(-30_000) };
    store.ledger.set(ledgerKey(v1.id, v1.version), v1);
    store.failures.set(`sim:x:${v1.version}`, {
      key: `sim:x:${v1.version}`,
      ...v1,
      record: {},
      attempts: 1,
      firstFailure: at(-20_000),
      lastFailure: at(-20_000),
      lastError: 'HTTP 422',
    });
    const v2 = at(-10_000);
    world.updates.push({
      id: 'x',
      version: new Date(v2).toISOString(),
      versionMs: v2,
      record: {},
      visibleAt: 0,
    });

    await engine.trigger('cron');
    const run = await engine.onAlarm();

    expect(run?.outcome).toBe('success');
    expect(world.delivered.has(`x@${new Date(v2).toISOString()}`)).toBe(true);
    expect(store.failures.size).toBe(0);
  });
});

describe('a flaky receiver does not stall the checkpoint (R19)', () => {
  /** A receiver failing a share of deliveries; it logs what arrived, in order. */
  const flakyWorld = (seed: number, failRate: number) => {
    const world = new World({
      seed,
      lagMs: 0,
      pageFailRate: 0,
      deliveryFailRate: 0,
      crashRate: 0,
      bounded: false,
    });
    const arrived: Update[] = [];
    const receiver = { failRate };
    const deliverer: Deliverer = {
      deliver: async (items) => {
        if (world.random() < receiver.failRate) return { kind: 'retry', error: 'HTTP 500' };
        for (const { update } of items) arrived.push(update);
        return world.deliver(items);
      },
    };
    return { world, arrived, receiver, deliverer };
  };
  const tick = async (engine: PollerEngine, world: World) => {
    world.now += MINUTE;
    await engine.trigger('manual');
    return engine.onAlarm();
  };
  /** Ids whose versions reached the receiver out of order (an older after a newer). */
  const outOfOrder = (arrived: Update[]) => {
    const newest = new Map<string, number>();
    const out: string[] = [];
    for (const { id, versionMs, version } of arrived) {
      if ((newest.get(id) ?? Number.NEGATIVE_INFINITY) > versionMs) out.push(`${id}@${version}`);
      newest.set(id, Math.max(newest.get(id) ?? versionMs, versionMs));
    }
    return out;
  };

  it('moves C on, delivers every update in order per id and leaves none failing once the receiver heals (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer(),
        fc.double({ min: 0.05, max: 0.5, noNaN: true }),
        async (seed, failRate) => {
          const { world, arrived, receiver, deliverer } = flakyWorld(seed, failRate);
          const store = new MemoryStore();
          const { engine } = engineIn(world, store, {
            config: { ...config(false, 0), max_attempts: 1_000 },
            deliverer,
          });
          let committedWithFailing = false;
          for (let i = 0; i < 15; i += 1) {
            world.produce(8, MINUTE);
            const before = store.read().checkpoint ?? 0;
            const run = await tick(engine, world);
            if (store.failing().size > 0) {
              expect(run?.outcome).toBe('partial');
              committedWithFailing ||= (store.read().checkpoint ?? 0) > before;
            }
            expect(lostBelowCheckpoint(world, store)).toEqual([]);
          }
          receiver.failRate = 0;
          for (let i = 0; i < 3; i += 1) await tick(engine, world);
          expect(store.failing().size).toBe(0);
          const missing = world.updates.filter(
            (u) =>
              !world.delivered.has(`${u.id}@${u.version}`) &&
              !store.deadLetters.has(`sim:${u.id}:${u.version}`),
          );
          expect(missing).toEqual([]);
          expect(outOfOrder(arrived)).toEqual([]);
          // A run that left a delivery failing moved C all the same.
          if (store.runs.some((run) => run.outcome === 'partial' || run.outcome === 'failed'))
            expect(committedWithFailing).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('commits a window whose failing update is stored, ends the run partial, and delivers it on the retry', async () => {
    const { world, receiver, deliverer } = flakyWorld(3, 1);
    const store = new MemoryStore();
    const { engine } = engineIn(world, store, { deliverer });
    world.updates.push({
      id: 'x',
      version: new Date(WORLD_START + 1_000).toISOString(),
      versionMs: WORLD_START + 1_000,
      record: { id: 'x' },
      visibleAt: 0,
    });
    const run = await tick(engine, world);
    expect(run?.outcome).toBe('partial');
    expect(run?.error).toContain('1 update(s) failing');
    expect(store.read().checkpoint).toBeGreaterThan(WORLD_START + 1_000);
    expect(store.read().wakeup).toMatchObject({ reason: 'retry' });
    expect([...store.failing().values()]).toMatchObject([{ id: 'x', record: { id: 'x' } }]);
    receiver.failRate = 0;
    world.updates.length = 0; // retried from its stored record, not from the upstream
    expect((await tick(engine, world))?.outcome).toBe('success');
    expect(world.delivered.has(`x@${new Date(WORLD_START + 1_000).toISOString()}`)).toBe(true);
    expect(store.failing().size).toBe(0);
  });

  it('a sorted window cut short by its budget moves C past a stored failing update, and the continuation waits for its retry', async () => {
    const { world, deliverer } = flakyWorld(6, 0);
    const store = new MemoryStore();
    const { engine } = engineIn(world, store, {
      config: config(false, 0, 12, true),
      deliverer: {
        deliver: async (items) =>
          items.some((item) => item.update.id === 'a1')
            ? { kind: 'retry', error: 'HTTP 500' }
            : deliverer.deliver(items),
      },
    });
    for (let i = 0; i < 40; i += 1) {
      world.updates.push({
        id: `a${i}`,
        version: `v${i}`,
        versionMs: WORLD_START + 1_000 + i * 10,
        record: {},
        visibleAt: 0,
      });
    }
    const run = await tick(engine, world);
    expect(run?.outcome).toBe('partial');
    expect(store.read().checkpoint).toBeGreaterThan(WORLD_START + 1_010);
    expect([...store.failing().keys()]).toContain('sim:a1:v1');
    // Not at once, as a plain continuation would: a receiver that is down would spend the
    // failing update's attempts within seconds.
    expect(store.read().wakeup).toMatchObject({ reason: 'retry' });
    expect(store.read().wakeup?.at ?? 0).toBeGreaterThan(world.now);
  });

  it('a receiver that answers 401 fails the run and keeps C, storing nothing as failing', async () => {
    const { world } = flakyWorld(4, 0);
    const store = new MemoryStore();
    const { engine } = engineIn(world, store, {
      deliverer: { deliver: async () => ({ kind: 'misconfigured', error: 'HTTP 401' }) },
    });
    world.produce(5, MINUTE);
    const run = await tick(engine, world);
    expect(run?.outcome).toBe('failed');
    expect(store.read().checkpoint).toBe(WORLD_START);
    expect(store.failing().size).toBe(0);
  });

  it('past the cap of stored failing updates, a window with a failure fails and C waits', async () => {
    const { world, deliverer } = flakyWorld(5, 1);
    const store = new MemoryStore();
    const { engine } = engineIn(world, store, {
      config: { ...config(false, 0, 5_000), max_attempts: 100 },
      deliverer,
    });
    for (let i = 0; i <= MAX_RETRYING; i += 1) {
      world.updates.push({
        id: `r${i}`,
        version: new Date(WORLD_START + 1_000).toISOString(),
        versionMs: WORLD_START + 1_000,
        record: {},
        visibleAt: 0,
      });
    }
    const run = await tick(engine, world);
    expect(run?.outcome).toBe('failed');
    expect(run?.error).toContain(`more than the ${MAX_RETRYING} kept`);
    expect(store.read().checkpoint).toBe(WORLD_START);
  });
});
