import { createRoute, z } from '@hono/zod-openapi';
import { isoTime } from '../../engine/iso-time.ts';
import { NUDGE_TOKEN_SECRET } from '../../poller/nudge-auth.ts';
import {
  configuredKeys,
  keyRole,
  MAX_SECRET_VALUE_BYTES,
  MIN_NUDGE_TOKEN_BYTES,
} from '../../secrets/index.ts';
import { knownPoller, meantLife, pollerObject } from '../known-poller.ts';
import { adminRefusals, guarded } from '../openapi/access.ts';
import { apiRoutes } from '../openapi/api-routes.ts';
import { errorResponse, otherLifeResponse, unknownPollerResponse } from '../openapi/errors.ts';
import { json } from '../openapi/json.ts';
import { PollerName } from '../openapi/params.ts';
import { readCappedText } from '../read-capped.ts';

/** Room for a JSON envelope around the largest value. */
const MAX_BODY_BYTES = MAX_SECRET_VALUE_BYTES + 1024;

const WithSecret = PollerName.extend({
  secret: z.string().meta({ description: 'The secret, as ${NAME} in the config names it' }),
});

const admin = guarded('admin', knownPoller);

/** The origins a secret may be sent to (R18): null for one not bound yet (set before binding). */
const Origins = z.array(z.string()).meta({
  description:
    'The only origins it may be sent to: those its config sent it to when it was set, or those given',
});

const SetAnswer = z.object({
  name: z.string(),
  set_at: z.string(),
  replaced: z.boolean(),
  origins: Origins,
});

const list = createRoute({
  method: 'get',
  path: '/{name}/secrets',
  summary: "A poller's own secrets: names, when each was set, the key that seals it (no values)",
  ...admin,
  request: { params: PollerName },
  responses: {
    200: json(
      z.object({
        secrets: z.array(
          z.object({
            name: z.string(),
            set_at: z.string(),
            key: z.enum(['current', 'previous', 'unknown']),
            origins: Origins.nullable(),
          }),
        ),
      }),
      'The secrets set.',
    ),
    404: unknownPollerResponse,
    ...adminRefusals,
  },
});

const put = createRoute({
  method: 'put',
  path: '/{name}/secrets/{secret}',
  summary: 'Set one of its secrets (write-only: never returned)',
  ...admin,
  request: {
    params: WithSecret,
    // Plain schemas, not zod: the value is read as it comes (text by default, JSON when the
    // Content-Type says so), and `curl --data-binary` sends no JSON type.
    body: {
      description:
        'The value as text, or JSON { "value": "…" } with, optionally, "origins": ["https://…"] (where it may be sent; by default, where the config sends it now)',
      required: true,
      content: {
        'text/plain': { schema: { type: 'string' } },
        'application/json': {
          schema: {
            type: 'object',
            properties: {
              value: { type: 'string' },
              origins: { type: 'array', items: { type: 'string' } },
            },
            required: ['value'],
          },
        },
      },
    },
  },
  responses: {
    ...adminRefusals,
    200: json(SetAnswer, 'Replaced.'),
    201: json(SetAnswer, 'Set for the first time.'),
    400: errorResponse(
      'A JSON body without a value, origins that are not http(s) origins, or a NUDGE_TOKEN that is too short.',
    ),
    404: unknownPollerResponse,
    409: errorResponse(
      'The secret cannot be set as asked, or the poller was deleted and created again meanwhile (see the error).',
    ),
    413: errorResponse(`Longer than ${MAX_SECRET_VALUE_BYTES} bytes.`),
    503: errorResponse('ADMIN_TOKEN, or SECRETS_KEY (secrets cannot be sealed), is not set.'),
  },
});

const remove = createRoute({
  method: 'delete',
  path: '/{name}/secrets/{secret}',
  summary: 'Remove one of its secrets',
  ...admin,
  request: { params: WithSecret },
  responses: {
    200: json(z.object({ deleted: z.literal(true) }), 'Removed.'),
    404: errorResponse('No such poller, or no such secret.'),
    409: otherLifeResponse,
    ...adminRefusals,
  },
});

/**
 * A poller's own secrets (ADMIN_TOKEN): write-only. PUT takes the value as the body (plain
 * text, or JSON `{ "value": "…" }`); GET lists names, when each was set and which key seals
 * it (`current`, `previous` during a rotation, or `unknown`); DELETE removes one. No
 * response, log or error ever holds a value.
 */
export const secretRoutes = apiRoutes()
  .openapi(list, async (c) => {
    const { name } = c.req.valid('param');
    const [secrets, keys] = await Promise.all([
      pollerObject(c.env, name).listSecrets(),
      configuredKeys(c.env),
    ]);
    return c.json(
      {
        secrets: secrets.map((secret) => ({
          name: secret.name,
          set_at: isoTime(secret.set_at),
          key: keyRole(secret.key_id, keys),
          origins: secret.origins,
        })),
      },
      200,
    );
  })
  .openapi(put, async (c) => {
    // Read up to the limit and no further, whatever Content-Length says (or leaves out).
    const body = await readCappedText(c.req.raw, MAX_BODY_BYTES);
    if (!body.ok)
      return c.json({ error: `a secret is at most ${MAX_SECRET_VALUE_BYTES} bytes` }, 413);
    let value = body.text;
    let origins: string[] | null = null;
    if ((c.req.header('content-type') ?? '').includes('application/json')) {
      let parsed: { value?: unknown; origins?: unknown };
      try {
        parsed = JSON.parse(body.text) as { value?: unknown; origins?: unknown };
        if (typeof parsed.value !== 'string') throw new Error('no value');
        value = parsed.value;
      } catch {
        return c.json({ error: 'the body must be the value, or JSON { "value": "…" }' }, 400);
      }
      if (parsed.origins !== undefined) {
        const given = readOrigins(parsed.origins);
        if (typeof given === 'string') return c.json({ error: given }, 400);
        origins = given;
      }
    }
    const { name, secret } = c.req.valid('param');
    if (secret === NUDGE_TOKEN_SECRET && utf8Bytes(value) < MIN_NUDGE_TOKEN_BYTES) {
      return c.json(
        {
          error: `secret ${NUDGE_TOKEN_SECRET}: at least ${MIN_NUDGE_TOKEN_BYTES} bytes (it alone lets anyone nudge the poller), e.g. openssl rand -hex 24`,
        },
        400,
      );
    }
    const result = await pollerObject(c.env, name).putSecret(meantLife(c), secret, value, origins);
    if (result.outcome === 'refused') return c.json({ error: result.error }, result.status);
    return c.json(
      {
        name: result.name,
        set_at: isoTime(result.set_at),
        replaced: result.replaced,
        origins: result.origins,
      },
      result.replaced ? 200 : 201,
    );
  })
  .openapi(remove, async (c) => {
    const { name, secret } = c.req.valid('param');
    const reply = await pollerObject(c.env, name).deleteSecret(meantLife(c), secret);
    if ('outcome' in reply) return c.json({ error: reply.error }, reply.status);
    if (!reply.deleted) return c.json({ error: 'no such secret' }, 404);
    return c.json({ deleted: true as const }, 200);
  });

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

/**
 * A PUT's `origins`: a list of http(s) origins (`https://api.example.com`, no path), each as
 * the URL parser writes it; or why not.
 */
function readOrigins(given: unknown): string[] | string {
  const wrong = 'origins must be a list of http(s) origins, e.g. ["https://api.example.com"]';
  if (!Array.isArray(given)) return wrong;
  const origins: string[] = [];
  for (const item of given) {
    if (typeof item !== 'string' || !/^https?:\/\//i.test(item) || !URL.canParse(item))
      return wrong;
    const url = new URL(item);
    if (`${url.pathname}${url.search}${url.hash}` !== '/' || url.username || url.password) {
      return `${wrong}: "${item}" is more than an origin`;
    }
    origins.push(url.origin);
  }
  return origins;
}
