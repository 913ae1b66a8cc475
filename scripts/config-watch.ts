/**
 * What `npm start` watches to reload by itself: wrangler.toml (POLLERS, crons) and .dev.vars
 * (tokens, secrets). `wrangler dev` reloads its vars when wrangler.toml changes, but reads
 * .dev.vars only when it starts, and the `--var`s start.ts derives from both (the local
 * FLEET_POLICY, DEMO_OAUTH) never change under it: so a change of either restarts it.
 */
import { type FSWatcher, watch } from 'node:fs';

/** The files whose change reloads the Worker, in the folder npm start runs in. */
export const WATCHED = ['wrangler.toml', '.dev.vars'] as const;

/** What the reload says, e.g. "reloaded: .dev.vars changed". */
export function reloadMessage(changed: readonly string[]): string {
  const names = WATCHED.filter((name) => changed.includes(name));
  return `reloaded: ${names.join(' and ')} changed`;
}

/**
 * Calls `onChange` with the names of the watched files that changed, once a burst of changes
 * is over (an editor writes a file in several steps, or swaps it by a rename: the folder is
 * watched, not the file). A change while `onChange` runs is kept for the next call.
 */
export function watchConfig(
  onChange: (changed: string[]) => Promise<void>,
  settleMs = 300,
): FSWatcher {
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const flush = () => {
    running = running.then(async () => {
      if (pending.size === 0) return;
      const changed = [...pending];
      pending.clear();
      await onChange(changed);
    });
  };
  return watch('.', (_event, name) => {
    if (name === null || !(WATCHED as readonly string[]).includes(name)) return;
    pending.add(name);
    clearTimeout(timer);
    timer = setTimeout(flush, settleMs);
  });
}
