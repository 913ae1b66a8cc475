// The fleet benchmark's probe Worker, in the same workerd as tidemark.

/**
 * The probe Worker: pollers' write counters and recent runs, the registry's size, and (for
 * the lost-alarm scenario) a poller's alarm deleted.
 */
export const PROBE = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/registry') {
      return Response.json(await env.REGISTRY.get(env.REGISTRY.idFromName('registry')).size());
    }
    const names = (url.searchParams.get('names') ?? '').split(',').filter(Boolean);
    if (url.pathname === '/lose') {
      // Only the bench's own Worker (bench/lost-alarms.ts) has this method.
      for (const name of names) await env.POLLER.get(env.POLLER.idFromName(name)).loseAlarm();
      return new Response('lost');
    }
    const read = [];
    for (const name of names) {
      const stub = env.POLLER.get(env.POLLER.idFromName(name));
      const stats = await stub.storageStats();
      const status = await stub.status();
      const last = status.last_run;
      read.push({
        rows: stats.rowsWritten + stats.alarmWrites,
        runs: status.counters.runs,
        lastRunMs: last ? Date.parse(last.finished_at) - Date.parse(last.started_at) : null,
      });
    }
    return Response.json(read);
  },
};
`;
