/**
 * `npm run sim`: the deterministic fault simulation. Every strategy faces the same seeded
 * worlds and the same fault schedule, in virtual time; tidemark is the real engine (the
 * module the Durable Object runs) over an in-memory store. Writes docs/simulation.md,
 * docs/simulation.svg and docs/simulation-mirror.svg; exits 1 if tidemark loses an update,
 * or its mirror deletes a live record or does not converge, printing the seed and the trace.
 *
 *   npm run sim -- --seeds 20 --scenario all
 *   npm run sim -- --scenario transient-failures --transient 0.3 --seeds 50
 *   npm run sim -- --scenario custom --downtime 10:100 --lag 30000 --crash 0.002
 *   npm run sim -- --scenario mirror --seeds 100
 *
 * The mirror scenarios (sim/mirror.ts: deletes, silent changes, reconciliation) have faults
 * of their own; the fault flags above apply to the loss scenarios only.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { VirtualClock } from './clock.ts';
import { MIRROR_SCENARIOS } from './mirror.ts';
import { mirrorSection } from './mirror-section.ts';
import { downtimeChart, type Row, summarize, table, warningTable } from './report.ts';
import {
  DOWNTIME_SWEEP,
  downtimeScenario,
  LAG_GROWTH,
  SCENARIOS,
  type Scenario,
} from './scenarios.ts';
import { type SimResult, simulate } from './simulate.ts';
import { makeStrategy, STRATEGIES, type StrategyName, TidemarkStrategy } from './strategies.ts';
import { DEFAULT_FAULTS, type Faults, START, World } from './world.ts';
import { writeFormatted } from './write-formatted.ts';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '20' },
    'first-seed': { type: 'string', default: '1' },
    scenario: { type: 'string', default: 'all' },
    out: { type: 'string', default: 'docs' },
    'sweep-seeds': { type: 'string', default: '5' },
    ticks: { type: 'string' },
    downtime: { type: 'string' },
    lag: { type: 'string' },
    transient: { type: 'string' },
    poison: { type: 'string' },
    'page-fail': { type: 'string' },
    crash: { type: 'string' },
    'duplicate-cron': { type: 'string' },
    slow: { type: 'string' },
    skew: { type: 'string' },
    ties: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
});

/** Fault flags from the command line, applied on top of every scenario that runs. */
function overrides(): Partial<Faults> {
  const number = (name: keyof typeof values) =>
    values[name] === undefined ? undefined : Number(values[name]);
  const out: Partial<Faults> = {};
  const set = <K extends keyof Faults>(key: K, value: Faults[K] | undefined) => {
    if (value !== undefined && !Number.isNaN(value)) out[key] = value;
  };
  set('ticks', number('ticks'));
  set('lagMs', number('lag'));
  set('transientRate', number('transient'));
  set('poisonRate', number('poison'));
  set('pageFailRate', number('page-fail'));
  set('crashRate', number('crash'));
  set('duplicateCronRate', number('duplicate-cron'));
  set('slowRate', number('slow'));
  set('skewMs', number('skew'));
  set('tieRate', number('ties'));
  if (typeof values.downtime === 'string') {
    out.downtime = values.downtime
      .split(',')
      .map((gap) => gap.split(':').map(Number) as [number, number]);
  }
  return out;
}

function labelOf(name: StrategyName): string {
  const clock = new VirtualClock(0);
  return makeStrategy(name, new World(0, { ...DEFAULT_FAULTS, ticks: 0 }, clock)).label;
}

async function runScenario(
  scenario: Scenario,
  seeds: number[],
): Promise<{ rows: Row[]; tidemarkLosses: SimResult[] }> {
  const rows: Row[] = [];
  const tidemarkLosses: SimResult[] = [];
  for (const strategy of STRATEGIES) {
    const results: SimResult[] = [];
    for (const seed of seeds) results.push(await simulate(strategy, seed, scenario.faults));
    rows.push(summarize(strategy, labelOf(strategy), results));
    if (strategy === 'tidemark')
      tidemarkLosses.push(...results.filter((result) => result.lost > 0));
  }
  return { rows, tidemarkLosses };
}

const seedCount = Number(values.seeds);
const firstSeed = Number(values['first-seed']);
const seeds = Array.from({ length: seedCount }, (_, i) => firstSeed + i);
const extra = overrides();
const chosen: Scenario[] =
  values.scenario === 'all'
    ? SCENARIOS
    : values.scenario === 'custom'
      ? [{ name: 'custom', what: 'faults from the command line', faults: { ...DEFAULT_FAULTS } }]
      : SCENARIOS.filter((scenario) => scenario.name === values.scenario);
const lagGrowth = values.scenario === 'all' || values.scenario === LAG_GROWTH.name;
const mirrorChosen = MIRROR_SCENARIOS.filter(
  (scenario) => values.scenario === 'all' || values.scenario === scenario.name,
);
if (chosen.length === 0 && !lagGrowth && mirrorChosen.length === 0) {
  const known = [...SCENARIOS, LAG_GROWTH, ...MIRROR_SCENARIOS].map((s) => s.name).join(', ');
  console.error(`no scenario "${values.scenario}"; known: all, custom, ${known}`);
  process.exit(2);
}

const started = Date.now();
const sections: string[] = [];
const losses: SimResult[] = [];
for (const base of chosen) {
  const scenario = { ...base, faults: { ...base.faults, ...extra } };
  const { rows, tidemarkLosses } = await runScenario(scenario, seeds);
  losses.push(...tidemarkLosses);
  const section = `### ${scenario.name}\n\n${scenario.what}. ${seeds.length} seeds × ${scenario.faults.ticks} cron ticks.\n\n${table(rows)}\n`;
  sections.push(section);
  console.log(section);
}

/**
 * The lag outgrows lag_allowance: tidemark is configured to lose here. What must hold is that
 * it warns before its first loss, in every seed; the naive designs lose without a word.
 */
let lagGrowthSection = '';
const unwarned: string[] = [];
if (lagGrowth) {
  const faults = { ...LAG_GROWTH.faults, ...extra };
  const rows: { label: string; results: SimResult[] }[] = [];
  for (const strategy of STRATEGIES) {
    const results: SimResult[] = [];
    for (const seed of seeds) results.push(await simulate(strategy, seed, faults));
    rows.push({ label: labelOf(strategy), results });
    if (strategy !== 'tidemark') continue;
    for (const result of results) {
      const warnedFirst =
        result.firstWarning !== null && result.firstWarning.at < (result.firstLossAt ?? 0);
      if (result.lost > 0 && !warnedFirst) unwarned.push(`seed ${result.seed}`);
    }
  }
  const advisedLabel = '(e) tidemark, lag_allowance raised to the value each warning suggests';
  const advise = (_name: StrategyName, world: World) =>
    new TidemarkStrategy(world, { followAdvice: true, label: advisedLabel });
  const advised: SimResult[] = [];
  for (const seed of seeds) advised.push(await simulate('tidemark', seed, faults, advise));
  rows.push({ label: advisedLabel, results: advised });
  const example = rows.find((row) => row.label === labelOf('tidemark'))?.results[0];
  const quote = (warning: SimResult['firstWarning']) =>
    warning === null
      ? '(none)'
      : `at t+${((warning.at - START) / 60_000).toFixed(1)} min: "${warning.text}"`;
  /** When the lag's bound passes `ms`, in minutes into the run. */
  const passes = (ms: number) => {
    const end = faults.lagEndMs ?? faults.lagMs;
    const tick = ((ms - faults.lagMs) / (end - faults.lagMs)) * (faults.ticks - 1);
    return `t+${Math.round((tick * faults.intervalMs) / 60_000)} min`;
  };
  const allowance = faults.lagAllowanceMs ?? 0;
  lagGrowthSection = `## Lag that outgrows \`lag_allowance\`

${LAG_GROWTH.what}. ${seeds.length} seeds × ${faults.ticks} ticks, one every ${faults.intervalMs / 1000} s (\`every = "${faults.intervalMs / 1000}s"\`).
tidemark measures how late records become visible (\`status.freshness\`), warns when that
passes half of \`lag_allowance\` and says "at risk" past 80% (in the run's log line, status
and \`/metrics\`); the naive designs have nothing to measure with. The lag's bound passes half
of \`lag_allowance\` at ${passes(allowance / 2)}, and all of it at ${passes(allowance)}. A loss is dated by
the run that moved the checkpoint past the update (when it started), a warning by the run
that gave it (when it ended).

${warningTable(rows)}

What tidemark said, seed ${example?.seed ?? seeds[0]}:

- first warning ${quote(example?.firstWarning ?? null)}
- first "at risk" ${quote(example?.firstAtRisk ?? null)}
`;
  console.log(lagGrowthSection);
}

/** Deletes and changes the stream never shows: a receiver's mirror (sim/mirror.ts). */
const MIRROR_SVG = 'simulation-mirror.svg';
const mirror =
  mirrorChosen.length === 0 ? null : await mirrorSection(mirrorChosen, seeds, MIRROR_SVG);

const sweepSeeds = Array.from({ length: Number(values['sweep-seeds']) }, (_, i) => firstSeed + i);
const sweep: Parameters<typeof downtimeChart>[0] = [];
for (const strategy of STRATEGIES) {
  const series: { downtime: number; lost: number }[] = [];
  for (const intervals of DOWNTIME_SWEEP) {
    const scenario = downtimeScenario(intervals);
    let lost = 0;
    for (const seed of sweepSeeds)
      lost += (await simulate(strategy, seed, { ...scenario.faults, ...extra })).lost;
    series.push({ downtime: intervals, lost: lost / sweepSeeds.length });
  }
  sweep.push({ strategy, label: labelOf(strategy), series });
}
const sweepTable = [
  `| strategy | ${DOWNTIME_SWEEP.map((d) => `${d}×`).join(' | ')} |`,
  `|---|${DOWNTIME_SWEEP.map(() => '---:').join('|')}|`,
  ...sweep.map((s) => `| ${s.label} | ${s.series.map((p) => p.lost.toFixed(1)).join(' | ')} |`),
].join('\n');
console.log(`### lost updates per run vs downtime length\n\n${sweepTable}\n`);

const args = process.argv.slice(2).join(' ');
const command = args === '' ? 'npm run sim' : `npm run sim -- ${args}`;
const markdown = `# Simulation: tidemark against naive pollers

Produced by \`${command}\` (${seeds.length} seeds per scenario, seeds ${seeds[0]}–${seeds.at(-1)}; ${((Date.now() - started) / 1000).toFixed(0)} s).
Every strategy faces the same seeded world: the same updates, the same replication lag, the
same failing deliveries and pages, crashes at the same await points, in virtual time. tidemark
is the real engine (\`src/engine\`, the module the Durable Object runs) over an in-memory store,
configured as [the docs say](configuration.md#choosing-lag_allowance) (\`lag_allowance\` covering the lag and a clock behind,
\`sorted = "asc"\`, \`max_window = "1h"\`, \`max_attempts = 5\`).

- **lost**: stamped below the strategy's final checkpoint, never delivered, not a dead letter.
- **duplicates**: deliveries beyond the first of an update.
- **still due**: not delivered yet but above the checkpoint (not lost: a later run would get it).
- **delay**: from the moment an update became visible to its first delivery.
- (d) has no fencing: a slow run loses its lock after one interval and a second run starts
  beside it; its failure mode is double work and duplicates ("max runs at once").

## Lost updates vs downtime

![lost updates vs downtime](simulation.svg)

${sweepTable}

## Scenarios

${sections.join('\n')}
${lagGrowthSection}${mirror === null ? '' : `\n${mirror.markdown}`}`;
if (!values['no-write']) {
  mkdirSync(values.out, { recursive: true });
  writeFormatted(`${values.out}/simulation.md`, markdown);
  writeFileSync(`${values.out}/simulation.svg`, downtimeChart(sweep));
  if (mirror?.svg) writeFileSync(`${values.out}/${MIRROR_SVG}`, mirror.svg);
  console.log(`wrote ${values.out}/simulation.md and its charts`);
}
if (unwarned.length > 0) {
  console.error(`tidemark lost updates without warning first in ${unwarned.join(', ')}`);
  process.exit(1);
}
if (mirror !== null && mirror.problems.length > 0) {
  console.error(`the mirror did not hold:\n${mirror.problems.join('\n')}`);
  process.exit(1);
}
if (losses.length > 0) {
  for (const loss of losses) {
    console.error(
      `tidemark lost ${loss.lost} update(s) with seed ${loss.seed}: ${loss.lostSample.join(', ')}`,
    );
    console.error(loss.trace.slice(-60).join('\n'));
  }
  process.exit(1);
}
