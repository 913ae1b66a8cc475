import { Hono } from 'hono';
import { pollerExists, pollerObject, staticPollers } from '../../catalog.ts';
import { requireToken } from '../auth.ts';
import { unknownPoller } from '../known-poller.ts';

/**
 * GET /status: every static poller's checkpoint, lag, lease, last run, counters (each one's
 * object is asked: for a fleet of runtime pollers, GET /pollers lists them from the registry
 * instead). GET /status/:poller: one poller, static or runtime.
 */
export const statusRoutes = new Hono<{ Bindings: Env }>()
  .use('*', requireToken('read'))
  .get('/', async (c) => {
    const loaded = staticPollers(c.env);
    const pollers = await Promise.all(
      loaded.pollers.map((entry) => pollerObject(c.env, entry.name).status()),
    );
    return c.json({ now: new Date().toISOString(), errors: loaded.errors, pollers });
  })
  .get('/:poller', async (c) => {
    const name = c.req.param('poller');
    if (!(await pollerExists(c.env, name))) return c.json(unknownPoller(name), 404);
    return c.json(await pollerObject(c.env, name).status());
  });
