import type { MiddlewareHandler } from 'hono';
import { envValues } from '../env-values.ts';
import { requireToken } from '../http/auth.ts';
import { demoUpstream } from './stub.ts';

/**
 * DEMO_OAUTH = "1" (or "true"): the demo upstream's sessions endpoints want an access token of
 * the demo OAuth provider (POST /demo/oauth/token) instead of the read token, so `npm start`
 * shows a poller on `source.auth = oauth2` (scripts/demo-oauth.ts switches the demo poller).
 */
export function demoOAuthRequired(env: Env): boolean {
  const value = envValues(env).DEMO_OAUTH;
  return value === true || value === '1' || value === 'true';
}

const REALM = 'Bearer realm="tidemark demo"';

/**
 * Who may read the demo's sessions, its deletions log and its listing: the read token, as
 * every other route, or, with DEMO_OAUTH, only a live access token of the demo provider: a
 * 401 otherwise (RFC 6750: `error="invalid_token"` for one it does not know or that expired).
 */
export function demoSessionsAuth(): MiddlewareHandler<{ Bindings: Env }> {
  const read = requireToken('read');
  return async (c, next) => {
    if (!demoOAuthRequired(c.env)) return read(c, next);
    const presented = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
    if (presented === undefined) {
      return c.json(
        {
          error:
            'the demo upstream wants an OAuth access token (DEMO_OAUTH is on): get one from POST /demo/oauth/token',
        },
        401,
        { 'www-authenticate': REALM },
      );
    }
    if (await demoUpstream(c.env).oauthAccepts(presented)) return next();
    return c.json({ error: 'invalid_token: the access token is unknown or has expired' }, 401, {
      'www-authenticate': `${REALM}, error="invalid_token"`,
    });
  };
}
