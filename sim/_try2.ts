import { SCENARIOS } from './scenarios.ts';
import { simulate } from './simulate.ts';

const name = process.argv[2] ?? 'transient-failures';
const scenario = SCENARIOS.find((s) => s.name === name)!;
const r = await simulate('tidemark', 1, scenario.faults);
console.log(JSON.stringify({ ...r, delays: r.delays.length, trace: undefined }));
