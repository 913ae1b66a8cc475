/**
 * Stands in for `wrangler dev` in the stop tests: starts a grandchild (its workerd), and both
 * keep fd 3 open, so the test sees that pipe close only once every one of them is gone. It
 * writes "ready" to fd 3 when both are up; with `--leave` it then exits, leaving the
 * grandchild behind.
 */
import { spawn } from 'node:child_process';
import { writeSync } from 'node:fs';

if (process.argv[2] === '--grandchild') {
  process.stdout.write('up\n');
  setInterval(() => {}, 60_000);
} else {
  const grandchild = spawn(process.execPath, [process.argv[1] ?? '', '--grandchild'], {
    stdio: ['ignore', 'pipe', 'inherit', 3],
  });
  grandchild.stdout?.once('data', () => {
    writeSync(3, 'ready\n');
    if (process.argv[2] === '--leave') process.exit(3);
  });
  setInterval(() => {}, 60_000);
}
