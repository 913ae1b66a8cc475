import { Cron } from 'croner';

/** When a poller ticks: the next tick strictly after a time, or null if there is none. */
export interface Schedule {
  next(after: number): number | null;
  /** For messages: `cron "*\/5 * * * *"` or `every 15s`. */
  describe: string;
}

/**
 * A poller's own schedule, from its `cron` (UTC, as Cron Triggers read it) or its `every`.
 * `every` ticks are spread by a hash of the poller's name: ten thousand pollers created with
 * `every = "60s"` do not all call their upstreams in the same second.
 */
export function scheduleOf(
  poller: string,
  timing: { cron?: string | undefined; every?: number | undefined },
): Schedule {
  if (timing.every !== undefined) {
    const every = timing.every;
    const offset = spread(poller) % every;
    return {
      describe: `every ${every} ms`,
      next: (after) => offset + (Math.floor((after - offset) / every) + 1) * every,
    };
  }
  const pattern = timing.cron ?? '';
  const cron = new Cron(pattern, { timezone: 'UTC', paused: true });
  return {
    describe: `cron "${pattern}"`,
    next: (after) => cron.nextRun(new Date(after))?.getTime() ?? null,
  };
}

/** A cron pattern croner cannot read, with why; null when it is fine. */
export function cronProblem(pattern: string): string | null {
  try {
    new Cron(pattern, { timezone: 'UTC', paused: true });
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** FNV-1a over the name: a stable, well-spread offset. */
function spread(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i += 1) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
