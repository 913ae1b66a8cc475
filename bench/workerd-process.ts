// The workerd process of a Miniflare this process started, and its CPU time (Linux /proc).
import { readFileSync } from 'node:fs';

/** The workerd process Miniflare started: the newest child of this process named workerd. */
export function workerdPid(): number | null {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  const named = children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'workerd';
    } catch {
      return false;
    }
  });
  return named.at(-1) ?? null;
}

/** User + system CPU time of a process so far, in ms (Linux /proc; 0 elsewhere). */
export function cpuMs(pid: number | null): number {
  if (pid === null) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100;
}
