import { type Context, Hono } from 'hono';
import { isoTimeOrNull } from '../../engine/iso-time.ts';
import { sameSecret } from '../../secrets/same-secret.ts';
import { isKnownPoller, pollerObject, unknownPoller } from '../known-poller.ts';
import { cachedPollerExists } from '../public-cache.ts';

/** The query parameter that can carry the nudge token, for senders that cannot set headers. */
const TOKEN_PARAM = 'token';

/**
 * POST /pollers/:name/nudge: "something changed upstream, poll soon", for an upstream's
 * webhook. Authenticated by ADMIN_TOKEN (a bearer header), or by the poller's own
 * NUDGE_TOKEN secret as a bearer header or `?token=`. The body is never read: a nudge is only
 * a hint, and nothing in it is trusted. 202 with what became of it; 401 for a missing or
 * wrong token, also for a poller that does not exist, so a nudge token reveals no names.
 * Whether the poller exists is asked of the registry for ADMIN_TOKEN, and otherwise taken
 * from the isolate's cache (public-cache.ts): anyone can send these.
 */
export const nudgeRoutes = new Hono<{ Bindings: Env }>().post('/:name/nudge', async (c) => {
  const name = c.req.param('name');
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
    return admin ? c.json(unknownPoller(name), 404) : invalidToken(c);
  }
  const reply = await pollerObject(c.env, name).nudge(admin ? null : presented);
  if (reply.outcome === 'unauthorized') return invalidToken(c);
  if (reply.outcome === 'ignored') return c.json(reply, 202);
  return c.json({ outcome: reply.outcome, run_at: isoTimeOrNull(reply.runAt) }, 202);
});

function invalidToken(c: Context<{ Bindings: Env }>) {
  return c.json(
    { error: "invalid token: this route takes ADMIN_TOKEN or the poller's NUDGE_TOKEN" },
    401,
    { 'www-authenticate': 'Bearer error="invalid_token"' },
  );
}
