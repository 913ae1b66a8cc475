/**
 * Writes a generated doc in the project's own format: what `npm run sim` and `npm run bench`
 * write must pass `npm run lint` (biome formats markdown tables), or running the documented
 * command would break `npm test`.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

export function writeFormatted(path: string, text: string): void {
  writeFileSync(path, text);
  const format = spawnSync('node_modules/.bin/biome', ['format', '--write', path], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (format.status !== 0) throw new Error(`biome could not format ${path}`);
}
