import { Hono } from 'hono';
import { requireToken } from '../http/auth.ts';
import { isKnownPoller, unknownPoller } from '../http/known-poller.ts';
import { parseTimestamp } from '../sources/time.ts';
import { audit } from './audit.ts';
import { demoSessionsAuth } from './oauth-flag.ts';
import { demoOAuthRoutes } from './oauth-routes.ts';
import { demoUpstream as upstream } from './stub.ts';

const DEMO_POLLER = 'demo_sessions';

const WINDOW_ERROR = 'date_from (and date_to, if given) must be ISO 8601 times';

/** A window from its query parameters, or null when they are not times. */
function windowOf(
  fromParam: string | undefined,
  toParam: string | undefined,
): { from: number; to: number | null } | null {
  const from = parseTimestamp(fromParam);
  const to = toParam === undefined ? null : parseTimestamp(toParam);
  return from === undefined || to === undefined ? null : { from, to };
}

/** A page size: 50 unless asked, 1 to 500. */
function limitOf(param: string | undefined): number {
  return Math.min(Math.max(Number(param ?? 50) || 50, 1), 500);
}

/**
 * The built-in demo upstream (`/demo/sessions`, its deletions log `/demo/sessions/deleted`
 * and its full listing `/demo/sessions/all`), its audit (`/demo/audit`) and its OAuth
 * provider's token endpoint (`/demo/oauth/token`).
 */
export const demoRoutes = new Hono<{ Bindings: Env }>()
  // The provider authenticates its client itself (client_id and DEMO_CLIENT_SECRET).
  .route('/oauth', demoOAuthRoutes)
  // Behind the read token like every other route (the demo poller sends it as ${STATUS_TOKEN}),
  // or, with DEMO_OAUTH, behind the demo provider's access tokens (oauth-flag.ts). The
  // pattern matches `/sessions` itself too.
  .use('/sessions/*', demoSessionsAuth())
  .use('/audit', requireToken('read'))
  .get('/sessions', async (c) => {
    const window = windowOf(c.req.query('date_from'), c.req.query('date_to'));
    if (window === null) return c.json({ error: WINDOW_ERROR }, 400);
    const page = await upstream(c.env).sessions({
      ...window,
      cursor: c.req.query('cursor') ?? null,
      limit: limitOf(c.req.query('limit')),
    });
    if (!page.ok) return c.json({ error: page.error }, page.status as 503);
    return c.json({ sessions: page.sessions, next_cursor: page.next_cursor });
  })
  // The deletions log ("deleted since"): { deleted: [{ id, deleted_at }], next_cursor }.
  .get('/sessions/deleted', async (c) => {
    const window = windowOf(c.req.query('date_from'), c.req.query('date_to'));
    if (window === null) return c.json({ error: WINDOW_ERROR }, 400);
    const page = await upstream(c.env).deleted({
      ...window,
      cursor: c.req.query('cursor') ?? null,
      limit: limitOf(c.req.query('limit')),
    });
    if (!page.ok) return c.json({ error: page.error }, page.status as 503);
    return c.json({ deleted: page.deleted, next_cursor: page.next_cursor });
  })
  // The full listing, by id, for a reconciliation: { sessions: [...], next_cursor }.
  .get('/sessions/all', async (c) => {
    const page = await upstream(c.env).all({
      cursor: c.req.query('cursor') ?? null,
      limit: limitOf(c.req.query('limit')),
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
