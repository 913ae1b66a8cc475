import { Hono } from 'hono';
import { loadPollers } from '../../config/load.ts';
import { requireToken } from '../auth.ts';

/** GET /status and GET /status/:poller: each poller's checkpoint, lag, lease, last run, counters. */
export const statusRoutes = new Hono<{ Bindings: Env }>()
  .use('*', requireToken('read'))
  .get('/', async (c) => {
    const loaded = loadPollers(c.env as unknown as Record<string, unknown>);
    const pollers = await Promise.all(
      loaded.pollers.map((entry) => pollerStatus(c.env, entry.name)),
    );
    return c.json({ now: new Date().toISOString(), errors: loaded.errors, pollers });
  })
  .get('/:poller', async (c) => {
    const name = c.req.param('poller');
    const loaded = loadPollers(c.env as unknown as Record<string, unknown>);
    if (!loaded.pollers.some((entry) => entry.name === name)) {
      return c.json({ error: `no poller "${name}" in POLLERS` }, 404);
    }
    return c.json(await pollerStatus(c.env, name));
  });

function pollerStatus(env: Env, name: string) {
  return env.POLLER.get(env.POLLER.idFromName(name)).status(name);
}
