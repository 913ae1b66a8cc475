import { loadPoller } from '../src/config/load.ts';
import type { PollerConfig } from '../src/config/schema.ts';
import { assessLateness } from '../src/engine/lateness.ts';
import { MemoryFreshness } from '../src/engine/memory-freshness.ts';
import { MemoryStore } from '../src/engine/memory-store.ts';
import { PollerEngine } from '../src/engine/poller.ts';
import type { RunContext } from '../src/engine/ports.ts';
import type { Window } from '../src/engine/window.ts';
import { chance, seededRandom } from './random.ts';
import { Crash, START, storeOfInstance, type World } from './world.ts';

/** A way of polling, driven by cron ticks and its own alarm in virtual time. */
export interface Strategy {
  readonly name: string;
  readonly label: string;
  cron(): void;
  /** When the strategy wants to be woken (its alarm), or null. */
  nextAlarm(): number | null;
  alarm(): void;
  /** Everything stamped below this is claimed done. */
  checkpoint(): number | null;
  /** Keys `id@version` kept as dead letters (only tidemark has them). */
  deadLetters(): Set<string>;
  /** Most runs seen in flight at once. */
  maxConcurrentRuns: number;
  /** Resolves when every spawned run has ended. */
  idle(): Promise<void>;
  /** The first warning the strategy gave that updates could be lost, if it can give any. */
  firstWarning?(): Warning | null;
  /** Exact checkpoint moves (when the run that made each started), where the strategy knows them. */
  checkpointMoves?(): { at: number; checkpoint: number }[];
}

/** A warning a strategy raised: when, how serious, and what it said. */
export interface Warning {
  at: number;
  risk: 'warning' | 'at_risk';
  text: string;
}

abstract class Base {
  maxConcurrentRuns = 0;
  protected running = 0;
  private readonly tasks = new Set<Promise<void>>();
  protected pageCount = 0;

  constructor(protected readonly world: World) {}

  protected spawn(task: () => Promise<unknown>): void {
    const promise = (async () => {
      this.running += 1;
      this.maxConcurrentRuns = Math.max(this.maxConcurrentRuns, this.running);
      try {
        await task();
      } catch (error) {
        if (!(error instanceof Crash)) throw error;
      } finally {
        this.running -= 1;
      }
    })();
    this.tasks.add(promise);
    void promise.finally(() => this.tasks.delete(promise));
  }

  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
  }

  deadLetters(): Set<string> {
    return new Set();
  }

  protected slowPage(): boolean {
    return chance(this.world.seed, 'slow', this.pageCount++) < this.world.faults.slowRate;
  }

  /** A naive run: page through [from, to) and deliver each record once, in order. */
  protected async naiveRun(
    from: number,
    to: number | null,
  ): Promise<{ pagesOk: boolean; failures: number }> {
    const window: Window = {
      from,
      to: to ?? this.world.clock.now,
      bounded: to !== null,
      startedAt: this.world.clock.now,
      cut: false,
    };
    let cursor: string | null = null;
    let failures = 0;
    for (;;) {
      const page = await this.world.fetchPage(window, cursor, this.slowPage());
      if (!page.ok) return { pagesOk: false, failures };
      for (const update of page.updates) {
        const key = `sim:${update.id}:${update.version}`;
        const result = await this.world.deliver([
          { update, op: 'upsert', idempotencyKey: key, attempt: 1 },
        ]);
        if (result.kind !== 'delivered') failures += 1;
      }
      if (page.next === null) return { pagesOk: true, failures };
      cursor = page.next;
    }
  }
}

/** (a) A stateless cron that asks for "the last interval" on every tick. */
export class LookbackStrategy extends Base implements Strategy {
  readonly name = 'lookback';
  readonly label = '(a) stateless "last interval" lookback';
  private lastTick: number | null = null;

  cron(): void {
    const now = this.world.clock.now;
    this.lastTick = now;
    this.spawn(() => this.naiveRun(now - this.world.faults.intervalMs, null));
  }
  nextAlarm(): number | null {
    return null;
  }
  alarm(): void {}
  checkpoint(): number | null {
    return this.lastTick === null ? null : this.lastTick - this.world.faults.intervalMs;
  }
}

/** (b) and (c): a stored checkpoint, written the naive ways. */
export class NaiveCheckpointStrategy extends Base implements Strategy {
  private stored: number = START;
  private busy = false;

  constructor(
    world: World,
    readonly name: 'end-time' | 'partial-advance',
    readonly label: string,
  ) {
    super(world);
  }

  cron(): void {
    if (this.busy) return; // one process, one run at a time
    this.busy = true;
    this.spawn(async () => {
      try {
        const T = this.world.clock.now;
        const { pagesOk, failures } = await this.naiveRun(this.stored, null);
        if (this.name === 'end-time' && pagesOk && failures === 0)
          this.stored = this.world.clock.now;
        if (this.name === 'partial-advance' && pagesOk) this.stored = T;
      } finally {
        this.busy = false;
      }
    });
  }
  nextAlarm(): number | null {
    return null;
  }
  alarm(): void {}
  checkpoint(): number | null {
    return this.stored;
  }
}

/**
 * (d) Start time, full success only, but a lock whose TTL is the cron interval, and no
 * fencing: a slow run loses its lock, a second run starts beside it, and whichever ends
 * last writes its own start time.
 */
export class ShortLeaseStrategy extends Base implements Strategy {
  readonly name = 'short-lease';
  readonly label = '(d) start time, full success, lock TTL = cron interval';
  private stored: number = START;
  private lockExpiresAt = 0;

  cron(): void {
    const now = this.world.clock.now;
    if (now < this.lockExpiresAt) return;
    this.lockExpiresAt = now + this.world.faults.intervalMs;
    this.spawn(async () => {
      const from = this.stored;
      const T = this.world.clock.now;
      const { pagesOk, failures } = await this.naiveRun(from, null);
      if (pagesOk && failures === 0) this.stored = T; // last writer wins
      this.lockExpiresAt = 0; // releases the lock, whoever holds it now
    });
  }
  nextAlarm(): number | null {
    return null;
  }
  alarm(): void {}
  checkpoint(): number | null {
    return this.stored;
  }
}

/** (e) tidemark: the real engine, a MemoryStore for storage, crashes at every await point. */
export class TidemarkStrategy extends Base implements Strategy {
  readonly name = 'tidemark';
  readonly label: string = '(e) tidemark';
  readonly store = new MemoryStore();
  readonly freshness = new MemoryFreshness();
  private readonly warnings: Warning[] = [];
  /** An operator who raises lag_allowance to the suggested value whenever tidemark warns. */
  private readonly followAdvice: boolean;
  private instance = 0;
  private engine: PollerEngine;
  private alarmAt: number | null = null;
  private awaitPoints = 0;
  private readonly config: PollerConfig;
  private readonly random: () => number;

  constructor(world: World, options: { followAdvice?: boolean; label?: string } = {}) {
    super(world);
    this.random = seededRandom(world.seed ^ 0x5eed);
    this.config = tidemarkConfig(world);
    this.followAdvice = options.followAdvice ?? false;
    if (options.label) this.label = options.label;
    this.engine = this.newInstance();
  }

  firstWarning(): Warning | null {
    return this.warnings[0] ?? null;
  }

  /** The config the engine runs with (an operator who follows advice changes it). */
  configOf(): PollerConfig {
    return this.config;
  }

  /** Every warning, in order. */
  allWarnings(): Warning[] {
    return [...this.warnings];
  }

  checkpointMoves(): { at: number; checkpoint: number }[] {
    return this.store.runs.flatMap((run) =>
      run.checkpoint === null ? [] : [{ at: run.startedAt, checkpoint: run.checkpoint }],
    );
  }

  /** Reads the run's log line as an operator's alerting would: a lateness warning, a near miss. */
  private heed(line: Record<string, unknown>): void {
    const risk = line.lateness_risk;
    if ((risk === 'warning' || risk === 'at_risk') && typeof line.lateness_warning === 'string') {
      this.warnings.push({ at: this.world.clock.now, risk, text: line.lateness_warning });
      if (this.followAdvice) {
        const { suggestedMs } = assessLateness(
          this.freshness.lateness(this.world.clock.now),
          this.config,
        );
        // The operator's change: the next run reads it (the config object the engine holds).
        if (suggestedMs !== null && suggestedMs > this.config.lag_allowance) {
          this.world.log(
            `operator: lag_allowance ${this.config.lag_allowance} → ${suggestedMs} ms`,
          );
          this.config.lag_allowance = suggestedMs;
        }
      }
    }
  }

  cron(): void {
    const engine = this.engine;
    this.spawn(() => engine.trigger('cron'));
  }
  nextAlarm(): number | null {
    return this.alarmAt;
  }
  alarm(): void {
    this.alarmAt = null;
    const engine = this.engine;
    this.spawn(() => engine.onAlarm());
  }
  checkpoint(): number | null {
    return this.store.read().checkpoint;
  }
  override deadLetters(): Set<string> {
    return new Set(
      [...this.store.deadLetters.values()].map((letter) => `${letter.id}@${letter.version}`),
    );
  }

  /** A fresh Durable Object instance over the same storage, as after an eviction or deploy. */
  private newInstance(): PollerEngine {
    const instance = this.instance;
    const guard = async <T>(work: () => Promise<T>): Promise<T> => {
      if (instance !== this.instance) throw new Crash('instance gone');
      if (chance(this.world.seed, 'crash', this.awaitPoints++) < this.world.faults.crashRate) {
        this.world.log(`crash of instance ${instance} at an await point`);
        this.instance += 1;
        this.engine = this.newInstance();
        // The platform re-arms the stored alarm for the new instance.
        const state = this.store.read();
        this.alarmAt = state.lease.held ? state.lease.expiresAt : (state.wakeup?.at ?? null);
        throw new Crash('crash');
      }
      const result = await work();
      if (instance !== this.instance) throw new Crash('instance gone');
      return result;
    };
    const context: RunContext = {
      poller: 'sim',
      config: this.config,
      store: storeOfInstance(this.store, () => instance === this.instance),
      source: {
        fetchPage: (window, cursor) =>
          guard(() => this.world.fetchPage(window, cursor, this.slowPage())),
      },
      deliverer: { deliver: (items) => guard(() => this.world.deliver(items)) },
      now: () => this.world.clock.now,
      random: this.random,
      sleep: (ms) => this.world.clock.sleep(ms),
      freshness: storeOfInstance(this.freshness, () => instance === this.instance),
      log: (line) => {
        this.heed(line);
        this.world.log(`run ${JSON.stringify(line)}`);
      },
    };
    return new PollerEngine(context, {
      set: async (at) => {
        if (instance === this.instance) this.alarmAt = at;
      },
    });
  }
}

/** tidemark configured as docs/configuration.md says: lag_allowance covers the lag and a clock behind. */
export function tidemarkConfig(world: World): PollerConfig {
  const { faults } = world;
  const lagAllowance = faults.lagAllowanceMs ?? faults.lagMs + Math.max(0, -faults.skewMs) + 1_000;
  const entry = loadPoller(
    'sim',
    {
      cron: '* * * * *',
      start_from: new Date(START).toISOString(),
      lag_allowance: `${lagAllowance}ms`,
      lease_ttl: '15m',
      max_run: '10m',
      max_window: '1h',
      max_subrequests: 300,
      max_attempts: 5,
      source: {
        url: 'https://sim.test/updates',
        from_param: 'from',
        to_param: 'to',
        sorted: 'asc',
        next: { type: 'cursor', param: 'cursor', path: 'next' },
      },
      deliver: { type: 'handler', name: 'sim', concurrency: 6 },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry.config;
}

export type StrategyName = 'lookback' | 'end-time' | 'partial-advance' | 'short-lease' | 'tidemark';

export const STRATEGIES: StrategyName[] = [
  'lookback',
  'end-time',
  'partial-advance',
  'short-lease',
  'tidemark',
];

export function makeStrategy(name: StrategyName, world: World): Strategy {
  switch (name) {
    case 'lookback':
      return new LookbackStrategy(world);
    case 'end-time':
      return new NaiveCheckpointStrategy(world, 'end-time', '(b) checkpoint = end time');
    case 'partial-advance':
      return new NaiveCheckpointStrategy(
        world,
        'partial-advance',
        '(c) start time, advanced even on partial failure',
      );
    case 'short-lease':
      return new ShortLeaseStrategy(world);
    case 'tidemark':
      return new TidemarkStrategy(world);
  }
}
