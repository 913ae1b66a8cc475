import { pollerObject } from '../catalog.ts';
import { pushConfig } from '../fleet/lifecycle.ts';
import { registryOf, type WatchdogEntry } from '../registry/registry.ts';

/** What visits found: alarms set again, configs pushed, pollers that cannot run or be reached. */
export interface VisitFindings {
  visited: number;
  repaired: string[];
  misconfigured: string[];
  failed: string[];
}

export const noFindings = (): VisitFindings => ({
  visited: 0,
  repaired: [],
  misconfigured: [],
  failed: [],
});

/** Adds what one group of visits found to the tick's findings. */
export function addFindings(into: VisitFindings, found: VisitFindings): void {
  into.visited += found.visited;
  into.repaired.push(...found.repaired);
  into.misconfigured.push(...found.misconfigured);
  into.failed.push(...found.failed);
}

/**
 * Visits pollers one by one, settled: an object that cannot be reached must not hide the
 * others. Each visit checks the alarm (a lost one is set again, a missed tick runs at once)
 * and pushes a runtime poller's config again if its object runs an older one.
 */
export async function visitAll(
  env: Env,
  pollers: readonly { name: string; entry: WatchdogEntry | null }[],
): Promise<VisitFindings> {
  const found = noFindings();
  await Promise.allSettled(pollers.map(({ name, entry }) => visit(env, name, entry, found)));
  return found;
}

async function visit(
  env: Env,
  name: string,
  entry: WatchdogEntry | null,
  found: VisitFindings,
): Promise<void> {
  found.visited += 1;
  try {
    const seen = await pollerObject(env, name).ensureScheduled(entry);
    if (!seen.ok && seen.stale) {
      // The object does not run what the registry issued (a push a crash cut short): it gets
      // the config as the registry has it now, read at this moment, so a name deleted since
      // the slice was read is not pushed back (and its object refuses it anyway, R14).
      if (await repush(env, name)) found.repaired.push(name);
      return;
    }
    if (!seen.ok) found.misconfigured.push(name);
    else if (seen.repaired) found.repaired.push(name);
  } catch (error) {
    found.failed.push(name);
    console.log(JSON.stringify({ event: 'watchdog_failed', poller: name, error: String(error) }));
  }
}

/** Pushes the config the registry issues now; false when it issues none (deleted meanwhile). */
export async function repush(env: Env, name: string): Promise<boolean> {
  const issued = await registryOf(env).issued(name);
  if (issued === null) return false;
  return (await pushConfig(env, name, issued)).outcome === 'configured';
}
