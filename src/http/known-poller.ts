import type { Context, MiddlewareHandler } from 'hono';
import { pollerExists, pollerLife } from '../catalog.ts';

export { pollerObject } from '../catalog.ts';

declare module 'hono' {
  interface ContextVariableMap {
    /** The life of the `:name` poller the knownPoller guard found (see pollerLife). */
    pollerLife: number;
  }
}

/** True when `name` is a poller: in POLLERS (valid or not), or created at run time. */
export function isKnownPoller(env: Env, name: string): Promise<boolean> {
  return pollerExists(env, name);
}

/** The 404 body for a name that is not a poller. */
export function unknownPoller(name: string) {
  return { error: `no poller "${name}" in POLLERS` };
}

/**
 * 404 for a `:name` that is not a poller (static or runtime); otherwise notes which life of
 * the poller it found, for the route's writes to carry (meantLife).
 */
export const knownPoller: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const name = c.req.param('name') ?? '';
  const life = await pollerLife(c.env, name);
  if (life === null) return c.json(unknownPoller(name), 404);
  c.set('pollerLife', life);
  return next();
};

/**
 * The life of the poller a route behind knownPoller found: what its writes are meant for, so
 * that the poller's object refuses them if a DELETE came in between (R14).
 */
export function meantLife(c: Context): number {
  const life = c.get('pollerLife');
  if (typeof life !== 'number') throw new Error('meantLife: the route is not behind knownPoller');
  return life;
}
