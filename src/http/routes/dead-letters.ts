import { Hono } from 'hono';
import * as z from 'zod';
import { requireToken } from '../auth.ts';
import { knownPoller, pollerObject } from '../known-poller.ts';
import { readJson } from '../read-json.ts';

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
  .use('/:name/dead-letters', requireToken('admin'), knownPoller)
  .use('/:name/dead-letters/*', requireToken('admin'), knownPoller)
  .get('/:name/dead-letters', async (c) => {
    const query = listQuery.safeParse(c.req.query());
    if (!query.success) {
      const error = query.error.issues
        .map((issue) => `${issue.path.join('.')}: ${issue.message}`)
        .join('; ');
      return c.json({ error }, 400);
    }
    const name = c.req.param('name');
    return c.json(await pollerObject(c.env, name).deadLetters(query.data.limit, query.data.cursor));
  })
  .post('/:name/dead-letters/:key/replay', async (c) => {
    const name = c.req.param('name');
    const result = await pollerObject(c.env, name).replayDeadLetter(c.req.param('key'));
    const status = {
      delivered: 200,
      not_found: 404,
      failed: 502,
      unreadable: 409,
      too_deep: 409,
      busy: 409,
      misconfigured: 409,
    } as const;
    return c.json(result, status[result.outcome]);
  })
  .delete('/:name/dead-letters/:key', async (c) => {
    const body = await readJson(c, discardBody);
    if (!body.ok) return body.response;
    const name = c.req.param('name');
    const result = await pollerObject(c.env, name).discardDeadLetter(
      c.req.param('key'),
      body.value.reason,
    );
    return c.json(result, result.outcome === 'discarded' ? 200 : 404);
  });
