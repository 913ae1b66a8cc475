import { Hono } from 'hono';
import { isoTime } from '../../engine/iso-time.ts';
import { MAX_SECRET_VALUE_BYTES } from '../../secrets/index.ts';
import { requireToken } from '../auth.ts';
import { knownPoller, pollerObject } from '../known-poller.ts';

/** Room for a JSON envelope around the largest value. */
const MAX_BODY_BYTES = MAX_SECRET_VALUE_BYTES + 1024;

/**
 * A poller's own secrets (ADMIN_TOKEN): write-only. PUT takes the value as the body (plain
 * text, or JSON `{ "value": "…" }`); GET lists names and when each was set; DELETE removes
 * one. No response, log or error ever holds a value.
 */
export const secretRoutes = new Hono<{ Bindings: Env }>()
  .use('/:name/secrets', requireToken('admin'), knownPoller)
  .use('/:name/secrets/*', requireToken('admin'), knownPoller)
  .get('/:name/secrets', async (c) => {
    const name = c.req.param('name');
    const secrets = await pollerObject(c.env, name).listSecrets(name);
    return c.json({
      secrets: secrets.map((secret) => ({ name: secret.name, set_at: isoTime(secret.set_at) })),
    });
  })
  .put('/:name/secrets/:secret', async (c) => {
    const declared = Number(c.req.header('content-length') ?? 0);
    if (declared > MAX_BODY_BYTES)
      return c.json({ error: `a secret is at most ${MAX_SECRET_VALUE_BYTES} bytes` }, 413);
    const text = await c.req.text();
    if (text.length > MAX_BODY_BYTES)
      return c.json({ error: `a secret is at most ${MAX_SECRET_VALUE_BYTES} bytes` }, 413);
    let value = text;
    if ((c.req.header('content-type') ?? '').includes('application/json')) {
      try {
        const body = JSON.parse(text) as { value?: unknown };
        if (typeof body.value !== 'string') throw new Error('no value');
        value = body.value;
      } catch {
        return c.json({ error: 'the body must be the value, or JSON { "value": "…" }' }, 400);
      }
    }
    const name = c.req.param('name');
    const result = await pollerObject(c.env, name).putSecret(name, c.req.param('secret'), value);
    if (result.outcome === 'refused') return c.json({ error: result.error }, result.status);
    return c.json(
      { name: result.name, set_at: isoTime(result.set_at), replaced: result.replaced },
      result.replaced ? 200 : 201,
    );
  })
  .delete('/:name/secrets/:secret', async (c) => {
    const name = c.req.param('name');
    const { deleted } = await pollerObject(c.env, name).deleteSecret(name, c.req.param('secret'));
    if (!deleted) return c.json({ error: 'no such secret' }, 404);
    return c.json({ deleted: true });
  });
