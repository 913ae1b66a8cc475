import { describe, expect, it } from 'vitest';
import { simulate } from '../../sim/simulate.ts';
import { TidemarkStrategy } from '../../sim/strategies.ts';
import { DEFAULT_FAULTS, type Faults, type World } from '../../sim/world.ts';
import type { RunRecord } from '../../src/engine/ports.ts';
import { alertsOf, type HealthInput, healthOf, retryingWarning } from '../../src/poller/health.ts';

/**
 * docs/semantics.md (R19), measured: a webhook receiver answering 500 to 5% of deliveries, on
 * a stream of 7 updates a second, for 10 minutes of virtual time, polled every minute.
 */
const FLAKY: Faults = {
  ...DEFAULT_FAULTS,
  intervalMs: 60_000,
  ticks: 10,
  updatesPerTick: 7 * 60,
  transientRate: 0.05,
};

/** What an operator's status page would have shown at each cron tick of the faulty minutes. */
interface Sample {
  lagMs: number;
  health: string;
  alerts: string[];
  retrying: number;
}

/** tidemark, looked at (C's lag, its health, its alerts) just before each cron tick. */
class Observed extends TidemarkStrategy {
  readonly samples: Sample[] = [];

  constructor(world: World, sorted: boolean) {
    super(world);
    const config = this.configOf();
    // One delivery per request: a minute of this stream (420 updates, 42 pages) needs more
    // than the simulation's usual 300 subrequests, or every run stops on its budget.
    config.max_subrequests = 1_000;
    // Unsorted, no window commits part of itself: only R19 moves C past a failing delivery.
    if (!sorted) config.source = { ...config.source, sorted: undefined };
  }

  override cron(): void {
    const now = this.world.clock.now;
    if (this.samples.length < FLAKY.ticks) {
      const state = this.store.read();
      const failing = [...this.store.failing().values()];
      const input: HealthInput = {
        configErrors: [],
        state,
        config: this.configOf(),
        firstSeenAt: null,
        lastRun: this.store.runs.findLast((run: RunRecord) => run.outcome !== 'skipped'),
        warnings: [],
        now,
        retrying:
          failing.length === 0
            ? null
            : {
                count: failing.length,
                oldestSince: Math.min(...failing.map((failure) => failure.firstFailure)),
              },
      };
      const warning = retryingWarning(input.retrying, input.config, now);
      if (warning !== null) input.warnings.push(warning);
      this.samples.push({
        lagMs: now - (state.checkpoint ?? now),
        health: healthOf(input),
        alerts: alertsOf(input),
        retrying: failing.length,
      });
    }
    super.cron();
  }
}

describe('the simulation: a flaky receiver does not stall the checkpoint (R19)', () => {
  it.each([
    { order: 'oldest first (sorted)', sorted: true },
    { order: 'in no order', sorted: false },
  ])(
    '5% failing deliveries at 7 updates/s for 10 minutes, records $order: C lags less than two intervals plus lag_allowance, no alert, nothing lost',
    {
      timeout: 60_000,
    },
    async ({ sorted }) => {
      for (let seed = 1; seed <= 3; seed += 1) {
        let observed: Observed | null = null;
        const result = await simulate('tidemark', seed, FLAKY, (_name, world) => {
          observed = new Observed(world, sorted);
          return observed;
        });
        const samples = (observed as Observed | null)?.samples ?? [];
        const allowance = (observed as Observed | null)?.configOf().lag_allowance ?? 0;
        expect(samples).toHaveLength(FLAKY.ticks);
        // The first tick has had no run yet: C is the start, one interval behind.
        const worst = Math.max(...samples.map((sample) => sample.lagMs));
        expect(worst, `seed ${seed}`).toBeLessThan(2 * FLAKY.intervalMs + allowance);
        expect(
          samples.flatMap((sample) => sample.alerts),
          `seed ${seed}`,
        ).toEqual([]);
        expect(
          samples.filter((sample) => sample.health === 'failing' || sample.health === 'lagging'),
          `seed ${seed}`,
        ).toEqual([]);
        // Updates were failing at most ticks: the status said so, as a warning.
        expect(
          samples.some((sample) => sample.retrying > 0),
          `seed ${seed}`,
        ).toBe(true);
        for (const sample of samples) {
          expect(sample.health, `seed ${seed}`).toBe(sample.retrying > 0 ? 'warning' : 'ok');
        }
        expect(result.lost, `seed ${seed}`).toBe(0);
        expect(result.pending + result.deadLettered, `seed ${seed}`).toBe(0);
        expect(result.delivered, `seed ${seed}`).toBe(result.produced);
      }
    },
  );
});
