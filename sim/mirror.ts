import { createHash } from 'node:crypto';
import { loadPoller } from '../src/config/load.ts';
import type { PollerConfig } from '../src/config/schema.ts';
import { deletionsContext } from '../src/engine/deletions-stream.ts';
import { MemoryStore } from '../src/engine/memory-store.ts';
import { PollerEngine } from '../src/engine/poller.ts';
import type { RunContext, Source } from '../src/engine/ports.ts';
import { ListingReconciler } from '../src/engine/reconcile.ts';
import { deletionsSource } from '../src/sources/derived-sources.ts';
import { tombstoneRule } from '../src/sources/tombstone.ts';
import { VirtualClock } from './clock.ts';
import {
  CHANGE_KINDS,
  type ChangeKind,
  MIRROR_FAULTS,
  type MirrorFaults,
  MirrorWorld,
} from './mirror-world.ts';
import { chance, seededRandom } from './random.ts';
import { Crash, START, storeOfInstance } from './world.ts';

/** How the mirror is kept: tidemark's engine, with or without a reconciliation. */
export interface MirrorVariant {
  name: string;
  label: string;
  /** reconcile.compare; null: no reconciliation. */
  compare: ReconcileCompare | null;
  /** The n-th listing comes back empty, once. */
  emptyListing?: number;
}

/** reconcile.compare: how a listed record is found changed. */
export type ReconcileCompare = 'updated_at' | 'content';

/** reconcile.every in the scenario. */
export const RECONCILE_EVERY_MS = 30 * 60_000;

export const MIRROR_VARIANTS: MirrorVariant[] = [
  {
    name: 'no-listing',
    label: '(a) the stream, its tombstones and the deletions stream; no listing',
    compare: null,
  },
  {
    name: 'reconcile',
    label: '(b) tidemark: (a) and `reconcile` every 30m, `compare = "content"`',
    compare: 'content',
  },
  {
    name: 'reconcile-empty-once',
    label: '(c) as (b); the second listing comes back empty, once',
    compare: 'content',
    emptyListing: 2,
  },
  {
    name: 'reconcile-by-updated-at',
    label: '(d) as (b), but `compare = "updated_at"` (the default)',
    compare: 'updated_at',
  },
];

/** A mirror scenario: the upstream's changes and the faults around them. */
export interface MirrorScenario {
  name: string;
  what: string;
  faults: MirrorFaults;
  /**
   * Whether the mirror must converge within one reconciliation period of the last change
   * (plus the cron ticks a listing waits for: see RECONCILE_SLACK_TICKS); with faults, runs
   * that fail put the listing off, and only convergence itself is required.
   */
  withinPeriod: boolean;
}

/**
 * How much later than one period after the last change the mirror may converge, in cron
 * ticks: a listing starts in the first run after it is due (up to a tick late), and takes the
 * seconds its pages and deliveries take.
 */
export const RECONCILE_SLACK_TICKS = 2;

/** The cron interval of the mirror scenarios. */
export const MIRROR_INTERVAL_MS = MIRROR_FAULTS.intervalMs;

export const MIRROR_SCENARIOS: MirrorScenario[] = [
  {
    name: 'mirror',
    what: 'changes become visible up to 10 s after they happen; nothing else fails',
    faults: MIRROR_FAULTS,
    withinPeriod: true,
  },
  {
    name: 'mirror-faults',
    what: 'the same, and 3% of page requests (every endpoint) and 5% of deliveries fail; the instance dies at 0.05% of await points',
    faults: { ...MIRROR_FAULTS, pageFailRate: 0.03, transientRate: 0.05, crashRate: 0.0005 },
    withinPeriod: false,
  },
];

/** What one variant did with one seed. */
export interface MirrorResult {
  variant: string;
  seed: number;
  changes: Record<ChangeKind, number>;
  /** At the end of the run (after the quiet drain): the mirror against the upstream. */
  ghosts: number;
  stale: number;
  missing: number;
  /** From the upstream's last change until the mirror last changed into its state; null: never. */
  convergedAfterMs: number | null;
  /** The longest a record stayed wrong in the mirror before it was put right (cron-tick samples). */
  longestWrongMs: number;
  /** Since when the oldest record still wrong at the end has been wrong (null: none is). */
  wrongSinceAtEnd: number | null;
  /** When the upstream last changed, in ms after the start. */
  lastChangeMs: number;
  falseDeletes: number;
  falseDeleteSample: string[];
  upserts: number;
  deletes: number;
  listings: number;
  held: number;
  /** Records wrong in the mirror at each cron tick, in ms after the start. */
  wrongOverTime: { at: number; wrong: number }[];
  trace: string[];
}

/** Drives tidemark's engine over the mirror world, in virtual time, cron tick by cron tick. */
class MirrorPoller {
  readonly store = new MemoryStore();
  readonly logs: Record<string, unknown>[] = [];
  private instance = 0;
  private engine: PollerEngine;
  private alarmAt: number | null = null;
  private awaitPoints = 0;
  private readonly tasks = new Set<Promise<void>>();
  private readonly random: () => number;
  private readonly config: PollerConfig;

  constructor(
    private readonly world: MirrorWorld,
    private readonly variant: MirrorVariant,
  ) {
    this.random = seededRandom(world.seed ^ 0x5eed);
    this.config = mirrorConfig(world.faults, variant.compare);
    this.engine = this.newInstance();
  }

  nextAlarm(): number | null {
    return this.alarmAt;
  }

  cron(): void {
    const engine = this.engine;
    this.spawn(() => engine.trigger('cron'));
  }

  alarm(): void {
    this.alarmAt = null;
    const engine = this.engine;
    this.spawn(() => engine.onAlarm());
  }

  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
  }

  private spawn(task: () => Promise<unknown>): void {
    const promise = (async () => {
      try {
        await task();
      } catch (error) {
        if (!(error instanceof Crash)) throw error;
      }
    })();
    this.tasks.add(promise);
    void promise.finally(() => this.tasks.delete(promise));
  }

  /** A fresh instance over the same storage; a crash at an await point starts the next one. */
  private newInstance(): PollerEngine {
    const instance = this.instance;
    const alive = () => instance === this.instance;
    const guard = async <T>(work: () => Promise<T>): Promise<T> => {
      if (!alive()) throw new Crash('instance gone');
      if (
        chance(this.world.seed, 'mirror-crash', this.awaitPoints++) < this.world.faults.crashRate
      ) {
        this.world.log(`crash of instance ${instance} at an await point`);
        this.instance += 1;
        this.engine = this.newInstance();
        const state = this.store.read();
        this.alarmAt = state.lease.held ? state.lease.expiresAt : (state.wakeup?.at ?? null);
        throw new Crash('crash');
      }
      const result = await work();
      if (!alive()) throw new Crash('instance gone');
      return result;
    };
    const guarded = (source: Source): Source => ({
      fetchPage: (window, cursor) => guard(() => source.fetchPage(window, cursor)),
    });
    const context: RunContext = {
      poller: 'mirror',
      config: this.config,
      store: instanceStore(this.store, alive),
      source: guarded(this.world.stream),
      deliverer: { deliver: (items) => guard(() => this.world.deliver(items)) },
      now: () => this.world.clock.now,
      random: this.random,
      sleep: (ms) => this.world.clock.sleep(ms),
      isDeleted: tombstoneRule(this.config.source),
      log: (line) => {
        this.logs.push(line);
        this.world.log(`run ${JSON.stringify(line)}`);
      },
    };
    const deletions = deletionsSource(this.config.source);
    if (deletions !== null)
      context.deletions = deletionsContext(context, guarded(this.world.deletions), deletions);
    if (this.variant.compare !== null) {
      const listing = guarded(this.world.listing());
      context.reconcile = new ListingReconciler(listing, null);
    }
    return new PollerEngine(context, {
      set: async (at) => {
        if (alive()) this.alarmAt = at;
      },
    });
  }
}

/**
 * The store as one instance sees it, its deletions stream and reconciliation included: once
 * the instance has died, every call throws.
 */
function instanceStore(store: MemoryStore, alive: () => boolean): MemoryStore {
  const streams = {
    deletionsStream: storeOfInstance(store.deletionsStream, alive),
    reconciliation: storeOfInstance(store.reconciliation, alive),
  };
  const outer = storeOfInstance(store, alive);
  return new Proxy(outer, {
    get(target, property, receiver) {
      if (property === 'deletionsStream' || property === 'reconciliation') return streams[property];
      return Reflect.get(target, property, receiver);
    },
  });
}

/** tidemark for the mirror: tombstones, the deletions stream, and (when set) the listing. */
export function mirrorConfig(faults: MirrorFaults, compare: ReconcileCompare | null): PollerConfig {
  const entry = loadPoller(
    'mirror',
    {
      cron: '* * * * *',
      start_from: new Date(START).toISOString(),
      lag_allowance: `${faults.lagMs + 1_000}ms`,
      lease_ttl: '15m',
      max_run: '10m',
      max_window: '1h',
      max_subrequests: 300,
      max_attempts: 5,
      source: {
        url: 'https://sim.test/records',
        from_param: 'from',
        to_param: 'to',
        sorted: 'asc',
        next: { type: 'cursor', param: 'cursor', path: 'next' },
        deleted: { path: 'deleted_at' },
        deletions: { url: 'https://sim.test/records/deleted', deleted_at: 'deleted_at' },
      },
      ...(compare === null
        ? {}
        : {
            reconcile: {
              every: `${RECONCILE_EVERY_MS / 60_000}m`,
              url: 'https://sim.test/records/all',
              updated_at: 'updated_at',
              compare,
            },
          }),
      deliver: { type: 'handler', name: 'mirror', concurrency: 6 },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry.config;
}

/**
 * Runs `work` with `crypto.subtle.digest` answering at once (SHA-256 by node:crypto, in a
 * resolved promise). `compare = "content"` hashes records, and the platform's digest settles
 * on a worker thread, at no fixed point between the virtual clock's steps: the run would
 * interleave with the clock by real time, and a seed would not give the same run twice.
 */
async function withPromptDigest<T>(work: () => Promise<T>): Promise<T> {
  const subtle = crypto.subtle;
  const digest = async (algorithm: unknown, data: ArrayBuffer | ArrayBufferView) => {
    const name = typeof algorithm === 'string' ? algorithm : (algorithm as { name?: unknown }).name;
    if (String(name).toUpperCase() !== 'SHA-256') throw new Error(`digest ${String(name)}`);
    const bytes = ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);
    const hash = createHash('sha256').update(bytes).digest();
    return hash.buffer.slice(hash.byteOffset, hash.byteOffset + hash.byteLength);
  };
  Object.defineProperty(subtle, 'digest', { value: digest, configurable: true, writable: true });
  try {
    return await work();
  } finally {
    Reflect.deleteProperty(subtle, 'digest');
  }
}

/** Runs one variant through one seeded mirror world: changes, then a quiet drain. */
export function simulateMirror(
  variant: MirrorVariant,
  seed: number,
  faults: MirrorFaults,
): Promise<MirrorResult> {
  return withPromptDigest(() => run(variant, seed, faults));
}

async function run(
  variant: MirrorVariant,
  seed: number,
  faults: MirrorFaults,
): Promise<MirrorResult> {
  const clock = new VirtualClock(START);
  const world = new MirrorWorld(seed, faults, clock, variant.emptyListing ?? null);
  const poller = new MirrorPoller(world, variant);
  const interval = faults.intervalMs;
  for (let tick = 0; tick < world.activeTicks + faults.drainTicks; tick += 1) {
    const at = START + (tick + 1) * interval;
    for (let guard = 0; guard < 10_000; guard += 1) {
      const alarm = poller.nextAlarm();
      if (alarm === null || alarm > at) break;
      await clock.advanceTo(Math.max(alarm, clock.now));
      poller.alarm();
    }
    await clock.advanceTo(at);
    world.sample(at);
    poller.cron();
  }
  await clock.advanceTo(clock.now + faults.intervalMs);
  await poller.idle();
  world.sample(clock.now);

  const end = clock.now;
  const { ghosts, stale, missing } = world.compare(end);
  const converged = ghosts + stale + missing === 0;
  const changes = Object.fromEntries(
    CHANGE_KINDS.map((kind) => [
      kind,
      world.changes.filter((change) => change.kind === kind).length,
    ]),
  ) as Record<ChangeKind, number>;
  const listings = poller.logs.filter((line) => line.event === 'reconcile');
  return {
    variant: variant.name,
    seed,
    changes,
    ghosts,
    stale,
    missing,
    convergedAfterMs: converged ? Math.max(0, world.lastMirrorChange - world.lastChangeAt) : null,
    longestWrongMs: world.longestWrongMs,
    wrongSinceAtEnd: world.stillWrong().since,
    lastChangeMs: world.lastChangeAt - START,
    falseDeletes: world.falseDeletes,
    falseDeleteSample: world.falseDeleteSample,
    upserts: world.delivered.upserts,
    deletes: world.delivered.deletes,
    listings: listings.length,
    held: listings.filter((line) => line.outcome === 'held').length,
    wrongOverTime: world.wrongOverTime.map(({ at, wrong }) => ({ at: at - START, wrong })),
    trace: world.trace,
  };
}
