import { loadPollers } from './config/load.ts';

/**
 * Sends a cron tick to the Durable Object of each enabled poller whose `cron` is this one.
 * Each object takes its lease and starts the run from its own alarm, so this returns quickly.
 */
export async function dispatchCron(cron: string, env: Env): Promise<string[]> {
  const loaded = loadPollers(env as unknown as Record<string, unknown>);
  const due: string[] = [];
  for (const entry of loaded.pollers) {
    if (!entry.ok) {
      if (entry.enabled && entry.cron === cron) {
        console.log(
          JSON.stringify({
            event: 'poller_misconfigured',
            poller: entry.name,
            errors: entry.errors,
          }),
        );
      }
      continue;
    }
    if (entry.config.enabled && entry.config.cron === cron) due.push(entry.name);
  }
  // Settled one by one: an object that cannot be reached must not hide the others' triggers.
  const replies = await Promise.allSettled(
    due.map((name) => env.POLLER.get(env.POLLER.idFromName(name)).trigger(name, 'cron')),
  );
  replies.forEach((reply, index) => {
    const poller = due[index];
    if (reply.status === 'rejected') {
      console.log(JSON.stringify({ event: 'trigger_failed', poller, error: String(reply.reason) }));
    } else if (reply.value.outcome !== 'started') {
      console.log(JSON.stringify({ event: 'trigger', poller, ...reply.value }));
    }
  });
  return due;
}
