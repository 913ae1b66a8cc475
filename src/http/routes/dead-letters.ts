import { Hono } from 'hono';
import { z } from 'zod';
import { loadPollers } from '../../config/load.ts';
import { requireToken } from '../auth.ts';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).optional(),
});

const discardBody = z.strictObject({
  reason: z.string().trim().min(1, 'say why it is discarded: it is kept in the audit log').max(500),
});

/**
 * Dead letters of a poller (R8): list them, replay one now, or discard one with a reason.
 * Admin only: a dead letter holds a whole record.
 */
export const deadLetterRoutes = new Hono<{ Bindings: Env }>()
  .use('*', requireToken('admin'))
  .use('/:name/*', async (c, next) => {
    const name = c.req.param('name') ?? '';
    const known = loadPollers(c.env as unknown as Record<string, unknown>).pollers.some(
      (entry) => entry.name === name,
    );
    if (!known) return c.json({ error: `no poller "${name}" in POLLERS` }, 404);
    return next();
  })
  .get('/:name/dead-letters', async (c) => {
    const query = listQuery.safeParse(c.req.query());
    if (!query.success) return c.json({ error: explain(query.error) }, 400);
    const name = c.req.param('name');
    return c.json(await poller(c.env, name).deadLetters(name, query.data.limit, query.data.cursor));
  })
  .post('/:name/dead-letters/:key/replay', async (c) => {
    const name = c.req.param('name');
    const result = await poller(c.env, name).replayDeadLetter(name, c.req.param('key'));
    const status = {
      delivered: 200,
      not_found: 404,
      failed: 502,
      unreadable: 409,
      misconfigured: 409,
    } as const;
    return c.json(result, status[result.outcome]);
  })
  .delete('/:name/dead-letters/:key', async (c) => {
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return c.json({ error: 'the body must be JSON: { "reason": "…" }' }, 400);
    }
    const body = discardBody.safeParse(raw);
    if (!body.success) return c.json({ error: explain(body.error) }, 400);
    const name = c.req.param('name');
    const result = await poller(c.env, name).discardDeadLetter(
      name,
      c.req.param('key'),
      body.data.reason,
    );
    return c.json(result, result.outcome === 'discarded' ? 200 : 404);
  });

function poller(env: Env, name: string) {
  return env.POLLER.get(env.POLLER.idFromName(name));
}

function explain(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`)
    .join('; ');
}
