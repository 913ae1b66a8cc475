import type { Context, MiddlewareHandler } from 'hono';
import { envValues } from '../env-values.ts';
import { sameSecret } from '../secrets/same-secret.ts';

export type Access = 'read' | 'admin';

/**
 * Bearer-token auth, failing closed. Reads accept STATUS_TOKEN or ADMIN_TOKEN; admin routes
 * only ADMIN_TOKEN. A route none of whose secrets is set answers 503 and names the secret.
 */
export function requireToken(access: Access): MiddlewareHandler<{ Bindings: Env }> {
  return async (c, next) => {
    // public_status = true opens the read-only routes (docs/operations.md, "Access", says the risk).
    if (access === 'read' && isPublic(c.env)) return next();
    const names =
      access === 'admin' ? (['ADMIN_TOKEN'] as const) : (['STATUS_TOKEN', 'ADMIN_TOKEN'] as const);
    const tokens = names.map((name) => c.env[name]).filter((token): token is string => !!token);
    if (tokens.length === 0) {
      const which = names.join(' or ');
      return c.json(
        {
          error: `this route is closed until ${which} is set: run \`wrangler secret put ${names[0]}\` (locally, add it to .dev.vars)`,
        },
        503,
      );
    }
    const presented = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
    if (presented === undefined) {
      return c.json({ error: 'missing bearer token: send Authorization: Bearer <token>' }, 401, {
        'www-authenticate': 'Bearer',
      });
    }
    for (const token of tokens) {
      if (await sameSecret(presented, token)) return next();
    }
    const readOnly = c.env.STATUS_TOKEN;
    if (access === 'admin' && readOnly && (await sameSecret(presented, readOnly))) {
      return c.json({ error: 'this token is read-only: this route needs ADMIN_TOKEN' }, 403);
    }
    return c.json({ error: 'invalid token' }, 401, {
      'www-authenticate': 'Bearer error="invalid_token"',
    });
  };
}

/**
 * Whether a request may read (STATUS_TOKEN or ADMIN_TOKEN, or public_status), for a public
 * route that shows more to a reader. Never refuses: no token or a wrong one is just false.
 */
export async function canRead(c: Context<{ Bindings: Env }>): Promise<boolean> {
  if (isPublic(c.env)) return true;
  const presented = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
  if (presented === undefined) return false;
  for (const token of [c.env.STATUS_TOKEN, c.env.ADMIN_TOKEN]) {
    if (token && (await sameSecret(presented, token))) return true;
  }
  return false;
}

/** Whether a request carries ADMIN_TOKEN, for a read page that shows an admin more. Never refuses. */
export async function canAdmin(c: Context<{ Bindings: Env }>): Promise<boolean> {
  const presented = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
  const admin = c.env.ADMIN_TOKEN;
  return presented !== undefined && !!admin && (await sameSecret(presented, admin));
}

/** The top-level var `public_status = true` (or "true"). */
function isPublic(env: Env): boolean {
  const value = envValues(env).public_status;
  return value === true || value === 'true';
}
