import { VirtualClock } from './clock.ts';
import { chance } from './random.ts';
import { makeStrategy, type Strategy, type StrategyName, type Warning } from './strategies.ts';
import { type Faults, START, World } from './world.ts';

/** What one strategy did with one seed. */
export interface SimResult {
  strategy: StrategyName;
  seed: number;
  produced: number;
  delivered: number;
  /** Stamped below the final checkpoint, never delivered and not a dead letter. */
  lost: number;
  duplicates: number;
  deadLettered: number;
  /** Above the checkpoint and not delivered yet (not lost: still due). */
  pending: number;
  /** From visible to first delivered, in seconds. */
  delays: number[];
  maxConcurrentRuns: number;
  lostSample: string[];
  trace: string[];
  /** When the first lost update was lost for good: the checkpoint passed it undelivered. */
  firstLossAt: number | null;
  /** The strategy's first warning that updates could be lost (only tidemark gives any). */
  firstWarning: Warning | null;
  /** Its first "at risk". */
  firstAtRisk: Warning | null;
}

/** Quiet ticks after the faulty ones, so that a correct poller can finish its backlog. */
const DRAIN_TICKS = 120;

/** Runs one strategy through one seeded world, in virtual time. */
export async function simulate(
  strategyName: StrategyName,
  seed: number,
  faults: Faults,
  make: (name: StrategyName, world: World) => Strategy = makeStrategy,
): Promise<SimResult> {
  const clock = new VirtualClock(START);
  const world = new World(seed, faults, clock);
  const strategy = make(strategyName, world);
  /** The checkpoint after each tick, to tell when an update was lost. */
  const sampled: { at: number; checkpoint: number }[] = [];
  const interval = faults.intervalMs;
  const tickOf = (at: number) => Math.floor((at - START) / interval);
  const upAgain = (tick: number) => {
    let t = tick;
    while (world.isDown(t)) t += 1;
    return START + t * interval;
  };

  for (let tick = 0; tick < faults.ticks + DRAIN_TICKS; tick += 1) {
    const at = START + (tick + 1) * interval;
    for (let guard = 0; guard < 10_000; guard += 1) {
      const alarm = strategy.nextAlarm();
      if (alarm === null || alarm > at) break;
      // While the Worker is down, alarms wait; the platform fires them once it is back.
      const fireAt = world.isDown(tickOf(alarm)) ? upAgain(tickOf(alarm)) : alarm;
      if (fireAt > at) break;
      await clock.advanceTo(Math.max(fireAt, clock.now));
      strategy.alarm();
    }
    await clock.advanceTo(at);
    sampled.push({ at, checkpoint: strategy.checkpoint() ?? START });
    if (world.isDown(tick)) continue;
    strategy.cron();
    if (chance(seed, 'duplicate-cron', tick) < faults.duplicateCronRate) strategy.cron();
  }
  await clock.advanceTo(clock.now + 24 * 3_600_000);
  await strategy.idle();

  const checkpoint = strategy.checkpoint() ?? START;
  const dead = strategy.deadLetters();
  const result: SimResult = {
    strategy: strategyName,
    seed,
    produced: world.updates.length,
    delivered: 0,
    lost: 0,
    duplicates: 0,
    deadLettered: 0,
    pending: 0,
    delays: [],
    maxConcurrentRuns: strategy.maxConcurrentRuns,
    lostSample: [],
    trace: [],
    firstLossAt: null,
    firstWarning: strategy.firstWarning?.() ?? null,
    firstAtRisk: null,
  };
  const warnings = (strategy as { allWarnings?: () => Warning[] }).allWarnings?.() ?? [];
  result.firstAtRisk = warnings.find((warning) => warning.risk === 'at_risk') ?? null;
  // Where the strategy knows when its checkpoint moved (the run that moved it), that; else
  // the checkpoint as seen after each tick.
  const moves = strategy.checkpointMoves?.() ?? sampled;
  const lostAt = (versionMs: number) => moves.find((move) => move.checkpoint > versionMs)?.at;
  // Updates stamped before the poller's start (start_from) were never its to deliver.
  const due = world.updates.filter((update) => update.versionMs >= START);
  result.produced = due.length;
  for (const update of due) {
    const key = `${update.id}@${update.version}`;
    const first = world.firstDelivered.get(key);
    if (first !== undefined) {
      result.delivered += 1;
      result.delays.push(Math.max(0, first - update.visibleAt) / 1000);
      result.duplicates += (world.deliveries.get(key) ?? 1) - 1;
    } else if (dead.has(key)) {
      result.deadLettered += 1;
    } else if (update.versionMs < checkpoint) {
      result.lost += 1;
      const at = lostAt(update.versionMs);
      if (at !== undefined && (result.firstLossAt === null || at < result.firstLossAt))
        result.firstLossAt = at;
      if (result.lostSample.length < 5)
        result.lostSample.push(`${key} (visible ${new Date(update.visibleAt).toISOString()})`);
    } else {
      result.pending += 1;
    }
  }
  if ((result.lost > 0 || process.env.SIM_TRACE) && strategyName === 'tidemark')
    result.trace = world.trace;
  return result;
}

/** The p-th percentile of `values` (nearest rank). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0
  );
}
