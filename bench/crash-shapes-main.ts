/**
 * Only the crashes mid-round and mid-children of `npm run bench` (bench/crash-shapes.ts), for
 * a change to them without the whole bench: prints their rows of the targets table and their
 * section of docs/benchmarks.md, as `npm run bench` writes them.
 *
 *   node --experimental-transform-types --no-warnings bench/crash-shapes-main.ts --crashes 50
 */
import { parseArgs } from 'node:util';
import { loadSweeps, shapeRedeliveries, shapeSection, shapeTargets } from './crash-shapes.ts';

const { values } = parseArgs({ options: { crashes: { type: 'string', default: '50' } } });
const began = Date.now();
const shapes = await shapeRedeliveries(await loadSweeps(), Number(values.crashes));
console.log(JSON.stringify(shapes, null, 2));
for (const [figure, target, measured, met] of shapeTargets(shapes)) {
  console.log(`| ${figure} | ${target} | ${measured} | ${met === 'yes' ? 'yes' : `**${met}**`} |`);
}
console.log(`\n${shapeSection(shapes)}`);
console.error(`${((Date.now() - began) / 1000).toFixed(0)} s`);
