/** Stands in for scripts/start.ts in the stop tests: supervises fake-dev.ts as start.ts does wrangler. */
import { fileURLToPath } from 'node:url';
import { superviseGroup } from '../../scripts/process-group.ts';

const dev = fileURLToPath(new URL('./fake-dev.ts', import.meta.url));
superviseGroup(process.execPath, [dev, ...process.argv.slice(2)], {
  stdio: ['ignore', 'inherit', 'inherit', 3],
  graceMs: 2_000,
  parentCheckMs: 50,
});
