import type { MiddlewareHandler } from 'hono';
import { loadPollers } from '../config/load.ts';

/** 404 for a `:name` that is not a poller in POLLERS (valid or not). */
export const knownPoller: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const name = c.req.param('name') ?? '';
  const known = loadPollers(c.env as unknown as Record<string, unknown>).pollers.some(
    (entry) => entry.name === name,
  );
  if (!known) return c.json({ error: `no poller "${name}" in POLLERS` }, 404);
  return next();
};

/** The Durable Object of a poller. */
export function pollerObject(env: Env, name: string) {
  return env.POLLER.get(env.POLLER.idFromName(name));
}
