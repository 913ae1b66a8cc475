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
  await Promise.all(
    due.map(async (name) => {
      const reply = await env.POLLER.get(env.POLLER.idFromName(name)).trigger(name, 'cron');
      if (reply.outcome !== 'started')
        console.log(JSON.stringify({ event: 'trigger', poller: name, ...reply }));
    }),
  );
  return due;
}
