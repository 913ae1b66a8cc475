import { createRoute } from '@hono/zod-openapi';
import { envValues } from '../env-values.ts';
import { SECURITY } from '../http/openapi/access.ts';
import { apiRoutes } from '../http/openapi/api-routes.ts';
import { sameSecret } from '../secrets/same-secret.ts';
import { DEMO_CLIENT_ID } from './oauth-client.ts';
import { demoUpstream } from './stub.ts';

/** Access tokens live 5 minutes unless DEMO_ACCESS_TOKEN_TTL (seconds) says otherwise. */
const DEFAULT_ACCESS_TTL_S = 300;

/** RFC 6749 §5.1: a token response, or an error of one, is never cached. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

type OAuthError = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type';

function refused(error: OAuthError, description: string, status: 400 | 401 = 400): Response {
  const headers: Record<string, string> = { ...NO_STORE };
  if (status === 401) headers['www-authenticate'] = 'Basic realm="tidemark demo"';
  return Response.json({ error, error_description: description }, { status, headers });
}

/** The client's id and secret: HTTP Basic (client_secret_basic) or the form (client_secret_post). */
function clientOf(
  header: string | undefined,
  form: URLSearchParams,
): { id: string; secret: string } | 'twice' | null {
  const basic = /^Basic\s+(\S+)$/i.exec(header ?? '')?.[1];
  if (basic !== undefined && form.has('client_secret')) return 'twice';
  if (basic === undefined) {
    const id = form.get('client_id');
    const secret = form.get('client_secret');
    return id === null || secret === null ? null : { id, secret };
  }
  try {
    const decoded = atob(basic);
    const colon = decoded.indexOf(':');
    if (colon < 0) return null;
    // RFC 6749 §2.3.1: both are form-encoded before they are joined.
    const decode = (text: string) => decodeURIComponent(text.replaceAll('+', ' '));
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

function accessTtlS(env: Env): number {
  const value = Number(envValues(env).DEMO_ACCESS_TOKEN_TTL);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_ACCESS_TTL_S;
}

const token = createRoute({
  method: 'post',
  path: '/token',
  summary: "Demo OAuth provider's token endpoint (refresh_token grant)",
  tags: ['demo'],
  // Not behind a token: the client authenticates itself (HTTP Basic, or the form).
  security: SECURITY.public,
  request: {
    body: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            properties: {
              grant_type: { type: 'string', enum: ['refresh_token'] },
              refresh_token: { type: 'string' },
              client_id: { type: 'string' },
              client_secret: { type: 'string' },
            },
            required: ['grant_type', 'refresh_token'],
          },
        },
      },
    },
  },
  responses: {
    200: { description: 'A new access token and refresh token (RFC 6749 §5.1).' },
    400: { description: 'An OAuth error (RFC 6749 §5.2): invalid_request, invalid_grant, …' },
    401: { description: 'invalid_client.' },
  },
});

/**
 * The demo OAuth provider's token endpoint (RFC 6749 §6): the refresh_token grant only, for
 * the client `tidemark-demo` with DEMO_CLIENT_SECRET. Each refresh retires the token presented
 * and issues a new pair; DEMO_REFRESH_TOKEN is good for the first one (oauth-tokens.ts). Not
 * behind the read token: the client authenticates itself.
 */
export const demoOAuthRoutes = apiRoutes().openapi(token, async (c) => {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    return refused('invalid_request', 'send the request as application/x-www-form-urlencoded');
  }
  // Read as bytes: workerd warns when .text() reads a body whose type is not text/*.
  const form = new URLSearchParams(new TextDecoder().decode(await c.req.arrayBuffer()));
  const client = clientOf(c.req.header('authorization'), form);
  if (client === 'twice') {
    return refused('invalid_request', 'authenticate the client one way: HTTP Basic or the form');
  }
  const expected = envValues(c.env).DEMO_CLIENT_SECRET;
  if (typeof expected !== 'string' || expected === '') {
    return refused(
      'invalid_client',
      'the demo provider has no client secret: set DEMO_CLIENT_SECRET (npm start puts one in .dev.vars)',
      401,
    );
  }
  if (
    client === null ||
    client.id !== DEMO_CLIENT_ID ||
    !(await sameSecret(client.secret, expected))
  ) {
    return refused(
      'invalid_client',
      `unknown client, or a wrong secret for ${DEMO_CLIENT_ID}`,
      401,
    );
  }
  if (form.get('grant_type') !== 'refresh_token') {
    return refused('unsupported_grant_type', 'the demo provider serves grant_type=refresh_token');
  }
  const presented = form.get('refresh_token');
  if (presented === null || presented === '') {
    return refused('invalid_request', 'refresh_token is missing');
  }
  const initial = envValues(c.env).DEMO_REFRESH_TOKEN;
  const grant = await demoUpstream(c.env).oauthRefresh(presented, {
    initial: typeof initial === 'string' && initial !== '' ? initial : null,
    accessTtlS: accessTtlS(c.env),
  });
  if (!grant.ok) return refused(grant.error, grant.error_description);
  const { ok: _ok, ...body } = grant;
  return Response.json(body, { headers: NO_STORE });
});
