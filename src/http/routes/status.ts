import { createRoute, z } from '@hono/zod-openapi';
import { pollerExists, pollerObject, staticPollers } from '../../catalog.ts';
import { unknownPoller } from '../known-poller.ts';
import { guarded, readRefusals } from '../openapi/access.ts';
import { apiRoutes } from '../openapi/api-routes.ts';
import { unknownPollerResponse } from '../openapi/errors.ts';
import { json } from '../openapi/json.ts';

/** One poller's status: its whole shape is in docs/operations.md ("Status"). */
const PollerStatus = z
  .looseObject({ name: z.string(), state: z.string(), alerts: z.array(z.string()) })
  .openapi('PollerStatus');

const all = createRoute({
  method: 'get',
  path: '/',
  summary: "Every static poller's status (each one's object is asked)",
  ...guarded('read'),
  responses: {
    200: json(
      z.object({ now: z.string(), errors: z.array(z.string()), pollers: z.array(PollerStatus) }),
      'The status of every static poller, and POLLERS errors.',
    ),
    ...readRefusals,
  },
});

const one = createRoute({
  method: 'get',
  path: '/{poller}',
  summary: "One poller's status, static or runtime",
  ...guarded('read'),
  request: { params: z.object({ poller: z.string() }) },
  responses: {
    200: json(PollerStatus, 'Its checkpoint, lag, lease, last run, counters, alerts.'),
    404: unknownPollerResponse,
    ...readRefusals,
  },
});

/**
 * GET /status: every static poller's checkpoint, lag, lease, last run, counters (each one's
 * object is asked: for a fleet of runtime pollers, GET /pollers lists them from the registry
 * instead). GET /status/:poller: one poller, static or runtime.
 */
export const statusRoutes = apiRoutes()
  .openapi(all, async (c) => {
    const loaded = staticPollers(c.env);
    const pollers = await Promise.all(
      loaded.pollers.map((entry) => pollerObject(c.env, entry.name).status()),
    );
    return c.json({ now: new Date().toISOString(), errors: loaded.errors, pollers }, 200);
  })
  .openapi(one, async (c) => {
    const name = c.req.valid('param').poller;
    if (!(await pollerExists(c.env, name))) return c.json(unknownPoller(name), 404);
    return c.json(await pollerObject(c.env, name).status(), 200);
  });
