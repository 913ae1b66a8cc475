import { createRoute, z } from '@hono/zod-openapi';
import { isKnownPoller, unknownPoller } from '../http/known-poller.ts';
import { guarded, SECURITY } from '../http/openapi/access.ts';
import { apiRoutes } from '../http/openapi/api-routes.ts';
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

const windowQuery = z.object({
  // Optional here so that a missing one gets the same 400 as a malformed one (windowOf).
  date_from: z.string().optional().meta({ description: 'ISO 8601, required: updated at or after' }),
  date_to: z.string().optional().meta({ description: 'ISO 8601: updated before' }),
  cursor: z.string().optional(),
  limit: z.string().optional().meta({ description: '1 to 500, 50 unless asked' }),
});

/** A demo route: the upstream a poller reads, not tidemark's API; described, not typed. */
function demoRoute(path: string, summary: string, query: z.ZodObject) {
  return createRoute({
    method: 'get',
    path,
    summary,
    tags: ['demo'],
    // The read token, as every other route (the demo poller sends it as ${STATUS_TOKEN}), or,
    // with DEMO_OAUTH, the demo provider's access tokens (oauth-flag.ts).
    middleware: [demoSessionsAuth()],
    security: SECURITY.read,
    request: { query },
    responses: {
      200: { description: 'A page, and next_cursor (null on the last page).' },
      400: { description: 'A query that is not valid.' },
      401: { description: 'No token, or (DEMO_OAUTH) no live access token.' },
      503: { description: 'The demo upstream failing on purpose (DEMO_ERROR_RATE).' },
    },
  });
}

const sessions = demoRoute(
  '/sessions',
  'Demo upstream: sessions updated in a window, paged',
  windowQuery,
);
const deleted = demoRoute(
  '/sessions/deleted',
  'Demo upstream: its deletions log ("deleted since"), paged',
  windowQuery,
);
const all = demoRoute(
  '/sessions/all',
  'Demo upstream: every session by id, for a reconciliation',
  windowQuery.pick({ cursor: true, limit: true }),
);
const auditLog = createRoute({
  method: 'get',
  path: '/audit',
  summary: 'Demo: what the demo receiver got from a poller, checked against the upstream',
  tags: ['demo'],
  ...guarded('read'),
  request: { query: z.object({ poller: z.string().optional() }) },
  responses: {
    200: { description: 'The audit: records missing, duplicated, out of order.' },
    404: { description: 'No poller of that name.' },
    401: { description: 'No bearer token, or not one of the tokens this route takes.' },
    503: { description: 'Closed: none of the secrets this route takes is set (fail closed).' },
  },
});

/**
 * The built-in demo upstream (`/demo/sessions`, its deletions log `/demo/sessions/deleted`
 * and its full listing `/demo/sessions/all`), its audit (`/demo/audit`) and its OAuth
 * provider's token endpoint (`/demo/oauth/token`).
 */
export const demoRoutes = apiRoutes()
  // The provider authenticates its client itself (client_id and DEMO_CLIENT_SECRET).
  .route('/oauth', demoOAuthRoutes)
  .openapi(sessions, async (c) => {
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
  .openapi(deleted, async (c) => {
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
  .openapi(all, async (c) => {
    const page = await upstream(c.env).all({
      cursor: c.req.query('cursor') ?? null,
      limit: limitOf(c.req.query('limit')),
    });
    if (!page.ok) return c.json({ error: page.error }, page.status as 503);
    return c.json({ sessions: page.sessions, next_cursor: page.next_cursor });
  })
  .openapi(auditLog, async (c) => {
    // Only a configured poller: any other name would create a Durable Object and write to it.
    const poller = c.req.query('poller') ?? DEMO_POLLER;
    if (!(await isKnownPoller(c.env, poller))) return c.json(unknownPoller(poller), 404);
    return c.json(await audit(c.env, poller));
  });
