import { DEFAULT_FAULTS, type Faults } from './world.ts';

/** A named fault mix, built to show one way of losing updates (and that tidemark does not). */
export interface Scenario {
  name: string;
  what: string;
  faults: Faults;
}

const with_ = (overrides: Partial<Faults>): Faults => ({ ...DEFAULT_FAULTS, ...overrides });

export const SCENARIOS: Scenario[] = [
  {
    name: 'downtime',
    what: 'the Worker is down for 30 cron intervals',
    faults: with_({ downtime: [[30, 30]] }),
  },
  {
    name: 'replication-lag',
    what: 'updates become visible up to 20 s after their timestamp; some pages are slow',
    faults: with_({ lagMs: 20_000, slowRate: 0.05, slowFactor: 25 }),
  },
  {
    name: 'transient-failures',
    what: '15% of deliveries and 5% of page requests fail',
    faults: with_({ transientRate: 0.15, pageFailRate: 0.05 }),
  },
  {
    name: 'poison',
    what: '2% of updates are refused by the receiver, always',
    faults: with_({ poisonRate: 0.02 }),
  },
  {
    name: 'crashes',
    what: 'the instance dies at 0.05% of await points (an eviction or a deploy): about one run in five',
    faults: with_({ crashRate: 0.0005 }),
  },
  {
    name: 'long-runs',
    what: 'some pages take minutes (runs outlive the cron interval); 30% of cron ticks fire twice',
    faults: with_({ slowRate: 0.03, slowFactor: 400, duplicateCronRate: 0.3 }),
  },
  {
    name: 'clock-skew',
    what: "the upstream's clock is 30 s behind the Worker's",
    faults: with_({ skewMs: -30_000 }),
  },
  {
    name: 'ties',
    what: '70% of updates share the previous timestamp; pages of 10 split them',
    faults: with_({ tieRate: 0.7 }),
  },
  {
    name: 'everything',
    what: 'all of the above at once, at lower rates, with a 100-interval downtime',
    faults: with_({
      downtime: [[20, 100]],
      ticks: 200,
      lagMs: 10_000,
      transientRate: 0.1,
      pageFailRate: 0.03,
      poisonRate: 0.01,
      crashRate: 0.001,
      duplicateCronRate: 0.2,
      slowRate: 0.01,
      slowFactor: 400,
      skewMs: -10_000,
      tieRate: 0.3,
    }),
  },
];

/**
 * The upstream's lag grows past the lag_allowance tidemark was configured with. Not among
 * SCENARIOS, where tidemark must lose nothing: here it is configured to lose, and what is
 * shown is that it says so (warning, then at risk) before the first update is lost, while the
 * naive designs lose silently; and that an operator who follows its advice loses nothing.
 */
export const LAG_GROWTH: Scenario = {
  name: 'lag-outgrows-allowance',
  what: "the upstream's replication lag grows from 2 s to 40 s over two hours; tidemark's lag_allowance is 10 s",
  faults: with_({
    intervalMs: 10_000,
    ticks: 720,
    updatesPerTick: 5,
    lagMs: 2_000,
    lagEndMs: 40_000,
    lagAllowanceMs: 10_000,
  }),
};

/** Downtime lengths for the chart, in cron intervals. */
export const DOWNTIME_SWEEP = [0, 1, 5, 10, 25, 50, 100];

export function downtimeScenario(intervals: number): Scenario {
  return {
    name: `downtime-${intervals}`,
    what: `down for ${intervals} intervals`,
    faults: with_({ downtime: intervals === 0 ? [] : [[20, intervals]], ticks: 60 + intervals }),
  };
}
