import { Hono } from 'hono';
import { isoTime } from '../../engine/iso-time.ts';
import { NUDGE_TOKEN_SECRET } from '../../poller/nudge-auth.ts';
import {
  configuredKeys,
  keyRole,
  MAX_SECRET_VALUE_BYTES,
  MIN_NUDGE_TOKEN_BYTES,
} from '../../secrets/index.ts';
import { requireToken } from '../auth.ts';
import { knownPoller, pollerObject } from '../known-poller.ts';
import { readCappedText } from '../read-capped.ts';

/** Room for a JSON envelope around the largest value. */
const MAX_BODY_BYTES = MAX_SECRET_VALUE_BYTES + 1024;

/**
 * A poller's own secrets (ADMIN_TOKEN): write-only. PUT takes the value as the body (plain
 * text, or JSON `{ "value": "…" }`); GET lists names, when each was set and which key seals
 * it (`current`, `previous` during a rotation, or `unknown`); DELETE removes one. No
 * response, log or error ever holds a value.
 */
export const secretRoutes = new Hono<{ Bindings: Env }>()
  .use('/:name/secrets', requireToken('admin'), knownPoller)
  .use('/:name/secrets/*', requireToken('admin'), knownPoller)
  .get('/:name/secrets', async (c) => {
    const name = c.req.param('name');
    const [secrets, keys] = await Promise.all([
      pollerObject(c.env, name).listSecrets(),
      configuredKeys(c.env),
    ]);
    return c.json({
      secrets: secrets.map((secret) => ({
        name: secret.name,
        set_at: isoTime(secret.set_at),
        key: keyRole(secret.key_id, keys),
      })),
    });
  })
  .put('/:name/secrets/:secret', async (c) => {
    // Read up to the limit and no further, whatever Content-Length says (or leaves out).
    const body = await readCappedText(c.req.raw, MAX_BODY_BYTES);
    if (!body.ok)
      return c.json({ error: `a secret is at most ${MAX_SECRET_VALUE_BYTES} bytes` }, 413);
    let value = body.text;
    if ((c.req.header('content-type') ?? '').includes('application/json')) {
      try {
        const parsed = JSON.parse(body.text) as { value?: unknown };
        if (typeof parsed.value !== 'string') throw new Error('no value');
        value = parsed.value;
      } catch {
        return c.json({ error: 'the body must be the value, or JSON { "value": "…" }' }, 400);
      }
    }
    const secret = c.req.param('secret');
    if (secret === NUDGE_TOKEN_SECRET && utf8Bytes(value) < MIN_NUDGE_TOKEN_BYTES) {
      return c.json(
        {
          error: `secret ${NUDGE_TOKEN_SECRET}: at least ${MIN_NUDGE_TOKEN_BYTES} bytes (it alone lets anyone nudge the poller), e.g. openssl rand -hex 24`,
        },
        400,
      );
    }
    const name = c.req.param('name');
    const result = await pollerObject(c.env, name).putSecret(secret, value);
    if (result.outcome === 'refused') return c.json({ error: result.error }, result.status);
    return c.json(
      { name: result.name, set_at: isoTime(result.set_at), replaced: result.replaced },
      result.replaced ? 200 : 201,
    );
  })
  .delete('/:name/secrets/:secret', async (c) => {
    const name = c.req.param('name');
    const { deleted } = await pollerObject(c.env, name).deleteSecret(c.req.param('secret'));
    if (!deleted) return c.json({ error: 'no such secret' }, 404);
    return c.json({ deleted: true });
  });

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;
