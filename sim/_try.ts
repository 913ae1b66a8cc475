import { SCENARIOS } from '/work/main/sim/scenarios.ts';
import { simulate } from '/work/main/sim/simulate.ts';

for (const scenario of SCENARIOS) {
  const t0 = Date.now();
  const rows = [];
  for (const s of ['lookback', 'end-time', 'partial-advance', 'short-lease', 'tidemark'] as const) {
    const r = await simulate(s, 1, scenario.faults);
    rows.push(
      `${s}: produced ${r.produced} delivered ${r.delivered} lost ${r.lost} dup ${r.duplicates} dead ${r.deadLettered} pending ${r.pending} conc ${r.maxConcurrentRuns}`,
    );
  }
  console.log(`== ${scenario.name} (${Date.now() - t0}ms)\n` + rows.join('\n'));
}
