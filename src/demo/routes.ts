import { Hono } from 'hono';
import { requireToken } from '../http/auth.ts';
import { isKnownPoller, unknownPoller } from '../http/known-poller.ts';
import { parseTimestamp } from '../sources/time.ts';
import { audit } from './audit.ts';

const DEMO_POLLER = 'demo_sessions';

function upstream(env: Env) {
  return env.DEMO_UPSTREAM.get(env.DEMO_UPSTREAM.idFromName('demo'));
}

/** The built-in demo upstream (`/demo/sessions`) and its audit (`/demo/audit`). */
export const demoRoutes = new Hono<{ Bindings: Env }>()
  // Behind the read token like every other route: the demo poller sends it as ${STATUS_TOKEN}.
  .use('*', requireToken('read'))
  .get('/sessions', async (c) => {
    const from = parseTimestamp(c.req.query('date_from'));
    const toParam = c.req.query('date_to');
    const to = toParam === undefined ? null : parseTimestamp(toParam);
    if (from === undefined || to === undefined) {
      return c.json({ error: 'date_from (and date_to, if given) must be ISO 8601 times' }, 400);
    }
    const limit = Math.min(Math.max(Number(c.req.query('limit') ?? 50) || 50, 1), 500);
    const page = await upstream(c.env).sessions({
      from,
      to,
      cursor: c.req.query('cursor') ?? null,
      limit,
    });
    if (!page.ok) return c.json({ error: page.error }, page.status as 503);
    return c.json({ sessions: page.sessions, next_cursor: page.next_cursor });
  })
  .get('/audit', async (c) => {
    // Only a configured poller: any other name would create a Durable Object and write to it.
    const poller = c.req.query('poller') ?? DEMO_POLLER;
    if (!(await isKnownPoller(c.env, poller))) return c.json(unknownPoller(poller), 404);
    return c.json(await audit(c.env, poller));
  });

export { upstream as demoUpstream };
