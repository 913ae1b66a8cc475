import type { MiddlewareHandler } from 'hono';
import { loadPollers } from '../config/load.ts';

/** True when `name` is a poller in POLLERS (valid or not). */
export function isKnownPoller(env: Env, name: string): boolean {
  return loadPollers(env as unknown as Record<string, unknown>).pollers.some(
    (entry) => entry.name === name,
  );
}

/** The 404 body for a name that is not a poller. */
export function unknownPoller(name: string) {
  return { error: `no poller "${name}" in POLLERS` };
}

/** 404 for a `:name` that is not a poller in POLLERS (valid or not). */
export const knownPoller: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const name = c.req.param('name') ?? '';
  if (!isKnownPoller(c.env, name)) return c.json(unknownPoller(name), 404);
  return next();
};

/** The Durable Object of a poller. */
export function pollerObject(env: Env, name: string) {
  return env.POLLER.get(env.POLLER.idFromName(name));
}
