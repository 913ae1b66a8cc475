import { createRoute } from '@hono/zod-openapi';
import { isoTimeOrNull } from '../../engine/iso-time.ts';
import { sameSecret } from '../../secrets/same-secret.ts';
import { isKnownPoller, pollerObject, unknownPoller } from '../known-poller.ts';
import { SECURITY } from '../openapi/access.ts';
import { apiRoutes } from '../openapi/api-routes.ts';
import { errorResponse, unknownPollerResponse } from '../openapi/errors.ts';
import { json } from '../openapi/json.ts';
import { PollerName } from '../openapi/params.ts';
import { Outcome } from '../openapi/run-view.ts';
import { cachedPollerExists } from '../public-cache.ts';

/** The query parameter that can carry the nudge token, for senders that cannot set headers. */
const TOKEN_PARAM = 'token';

const INVALID_TOKEN = {
  error: "invalid token: this route takes ADMIN_TOKEN or the poller's NUDGE_TOKEN",
};
const INVALID_TOKEN_CHALLENGE = { 'www-authenticate': 'Bearer error="invalid_token"' };

const nudge = createRoute({
  method: 'post',
  path: '/{name}/nudge',
  summary: '"Something changed upstream, poll soon", for an upstream\'s webhook',
  description:
    "ADMIN_TOKEN as a bearer header, or the poller's NUDGE_TOKEN as a bearer header or ?token=. The body is never read.",
  security: SECURITY.nudge,
  // `?token=` is the nudgeTokenQuery scheme, so it is not a parameter as well.
  request: { params: PollerName },
  responses: {
    202: json(Outcome, 'What became of it: scheduled (run_at), coalesced, or ignored.'),
    401: errorResponse('A missing or wrong token, or (to a nudge token) no such poller.'),
    404: unknownPollerResponse,
  },
});

/**
 * POST /pollers/:name/nudge: "something changed upstream, poll soon", for an upstream's
 * webhook. Authenticated by ADMIN_TOKEN (a bearer header), or by the poller's own
 * NUDGE_TOKEN secret as a bearer header or `?token=`. The body is never read: a nudge is only
 * a hint, and nothing in it is trusted. 202 with what became of it; 401 for a missing or
 * wrong token, also for a poller that does not exist, so a nudge token reveals no names.
 * Whether the poller exists is asked of the registry for ADMIN_TOKEN, and otherwise taken
 * from the isolate's cache (public-cache.ts): anyone can send these.
 */
export const nudgeRoutes = apiRoutes().openapi(nudge, async (c) => {
  const { name } = c.req.valid('param');
  const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
  const presented = bearer ?? c.req.query(TOKEN_PARAM);
  if (presented === undefined || presented === '') {
    return c.json(
      {
        error: `missing token: send Authorization: Bearer <token>, or ?${TOKEN_PARAM}=<the poller's NUDGE_TOKEN>`,
      },
      401,
      { 'www-authenticate': 'Bearer' },
    );
  }
  // ADMIN_TOKEN only from the header: a query string ends up in logs.
  const admin =
    bearer !== undefined && !!c.env.ADMIN_TOKEN && (await sameSecret(bearer, c.env.ADMIN_TOKEN));
  const known = admin ? isKnownPoller(c.env, name) : cachedPollerExists(c.env, name);
  if (!(await known)) {
    return admin
      ? c.json(unknownPoller(name), 404)
      : c.json(INVALID_TOKEN, 401, INVALID_TOKEN_CHALLENGE);
  }
  const reply = await pollerObject(c.env, name).nudge(admin ? null : presented);
  if (reply.outcome === 'unauthorized') return c.json(INVALID_TOKEN, 401, INVALID_TOKEN_CHALLENGE);
  if (reply.outcome === 'ignored') return c.json(reply, 202);
  return c.json({ outcome: reply.outcome, run_at: isoTimeOrNull(reply.runAt) }, 202);
});
