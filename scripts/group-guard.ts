/**
 * `node scripts/group-guard.ts <pgid> <graceMs>`, started by process-group.ts: waits until its
 * stdin closes (the process that started it is gone, however it died), then stops the process
 * group: SIGTERM, and SIGKILL if it is still there after the grace period.
 */
const pgid = Number(process.argv[2]);
const graceMs = Number(process.argv[3] ?? 5_000);
const CHECK_MS = 100;

function signalGroup(signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

if (!Number.isInteger(pgid) || pgid <= 1) process.exit(2);
process.stdin.on('data', () => {});
process.stdin.on('close', () => {
  if (!signalGroup('SIGTERM')) process.exit(0);
  const startedAt = Date.now();
  setInterval(() => {
    if (!signalGroup(0)) process.exit(0);
    if (Date.now() - startedAt >= graceMs) {
      signalGroup('SIGKILL');
      process.exit(0);
    }
  }, CHECK_MS);
});
