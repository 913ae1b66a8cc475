import type { MiddlewareHandler } from 'hono';
import { pollerExists } from '../catalog.ts';

export { pollerObject } from '../catalog.ts';

/** True when `name` is a poller: in POLLERS (valid or not), or created at run time. */
export function isKnownPoller(env: Env, name: string): Promise<boolean> {
  return pollerExists(env, name);
}

/** The 404 body for a name that is not a poller. */
export function unknownPoller(name: string) {
  return { error: `no poller "${name}" in POLLERS` };
}

/** 404 for a `:name` that is not a poller (static or runtime). */
export const knownPoller: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const name = c.req.param('name') ?? '';
  if (!(await isKnownPoller(c.env, name))) return c.json(unknownPoller(name), 404);
  return next();
};
