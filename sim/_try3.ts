import { SCENARIOS } from './scenarios.ts';
import { simulate } from './simulate.ts';

const scenario = SCENARIOS.find((s) => s.name === (process.argv[2] ?? 'transient-failures'))!;
const r = await simulate('tidemark', 1, scenario.faults);
console.log(r.lostSample);
for (const line of r.trace.filter((l) => l.includes('"event":"run"')).slice(0, 40)) {
  const m = JSON.parse(line.slice(line.indexOf('{')));
  console.log(
    line.slice(11, 19),
    m.trigger,
    m.outcome,
    'w',
    m.windows,
    'p',
    m.pages,
    'r',
    m.records,
    'C',
    m.checkpoint?.slice(11, 19),
    (m.error ?? '').slice(0, 110),
  );
}
