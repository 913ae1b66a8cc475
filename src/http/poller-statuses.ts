import { staticPollers } from '../catalog.ts';
import type { PollerStatus } from '../poller/status.ts';
import { pollerObject } from './known-poller.ts';

/** Every poller in POLLERS (valid or not) with its status, and whether it is enabled. */
export async function pollerStatuses(env: Env): Promise<{
  errors: string[];
  pollers: { status: PollerStatus; enabled: boolean }[];
}> {
  const loaded = staticPollers(env);
  const pollers = await Promise.all(
    loaded.pollers.map(async (entry) => ({
      status: await pollerObject(env, entry.name).status(),
      enabled: entry.ok ? entry.config.enabled : entry.enabled,
    })),
  );
  return { errors: loaded.errors, pollers };
}
