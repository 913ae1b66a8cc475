import { createRoute, z } from '@hono/zod-openapi';
import { knownPoller, meantLife, pollerObject } from '../known-poller.ts';
import { adminRefusals, guarded } from '../openapi/access.ts';
import { apiRoutes } from '../openapi/api-routes.ts';
import {
  ErrorBody,
  errorResponse,
  otherLifeResponse,
  unknownPollerResponse,
} from '../openapi/errors.ts';
import { json } from '../openapi/json.ts';
import { jsonBody } from '../openapi/json-body.ts';
import { PollerName } from '../openapi/params.ts';
import { Outcome } from '../openapi/run-view.ts';
import { readJson } from '../read-json.ts';

const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().min(1).optional(),
});

const discardBody = z.strictObject({
  reason: z.string().trim().min(1, 'say why it is discarded: it is kept in the audit log').max(500),
});

const DeadLetter = z
  .looseObject({
    key: z.string(),
    kind: z.enum(['delivery', 'unreadable']),
    id: z.string().nullable(),
    version: z.string().nullable(),
    record: z.unknown().meta({ description: 'The record; null when kept as record_text' }),
    record_text: z.string().optional(),
    record_note: z.string().optional(),
    error: z.string(),
    attempts: z.number().int(),
    first_failure: z.string(),
    last_failure: z.string(),
  })
  .openapi('DeadLetter');

const WithKey = PollerName.extend({ key: z.string() });

// Admin only: a dead letter holds a whole record.
const admin = guarded('admin', knownPoller);

const list = createRoute({
  method: 'get',
  path: '/{name}/dead-letters',
  summary: "A poller's dead letters, oldest first (paged)",
  ...admin,
  request: { params: PollerName, query: listQuery },
  responses: {
    200: json(
      z.object({ items: z.array(DeadLetter), next_cursor: z.string().nullable() }),
      'One page of dead letters.',
    ),
    400: errorResponse('A limit or cursor that is not valid.'),
    404: unknownPollerResponse,
    ...adminRefusals,
  },
});

const replay = createRoute({
  method: 'post',
  path: '/{name}/dead-letters/{key}/replay',
  summary: 'Deliver a dead letter again now (removed when it is delivered)',
  ...admin,
  request: { params: WithKey },
  responses: {
    200: json(Outcome, 'Delivered, and removed.'),
    404: json(
      z.union([Outcome, ErrorBody]),
      'No such poller (an error) or dead letter (an outcome).',
    ),
    409: json(Outcome, 'A run holds the lease, or the record cannot be delivered as it is.'),
    502: json(Outcome, 'The delivery failed again: the error, and it stays.'),
    ...adminRefusals,
  },
});

const discard = createRoute({
  method: 'delete',
  path: '/{name}/dead-letters/{key}',
  summary: 'Discard a dead letter, with a reason kept in the audit log',
  ...admin,
  request: { params: WithKey, body: jsonBody(discardBody, 'Why it is discarded.') },
  responses: {
    200: json(Outcome, 'Discarded.'),
    400: errorResponse('A body that is not JSON or has no reason.'),
    404: json(
      z.union([Outcome, z.object({ error: z.string() })]),
      'No such poller or dead letter.',
    ),
    409: otherLifeResponse,
    ...adminRefusals,
  },
});

/** How each replay outcome is answered. */
const REPLAY_STATUS = {
  delivered: 200,
  not_found: 404,
  failed: 502,
  unreadable: 409,
  too_deep: 409,
  busy: 409,
  misconfigured: 409,
} as const;

/** Dead letters of a poller (R8): list them, replay one now, or discard one with a reason. */
export const deadLetterRoutes = apiRoutes()
  .openapi(list, async (c) => {
    const { name } = c.req.valid('param');
    const { limit, cursor } = c.req.valid('query');
    return c.json(await pollerObject(c.env, name).deadLetters(limit, cursor), 200);
  })
  .openapi(replay, async (c) => {
    const { name, key } = c.req.valid('param');
    const result = await pollerObject(c.env, name).replayDeadLetter(key);
    return c.json(result, REPLAY_STATUS[result.outcome]);
  })
  .openapi(discard, async (c) => {
    const body = await readJson(c, discardBody);
    if (!body.ok) return c.json({ error: body.error }, 400);
    const { name, key } = c.req.valid('param');
    const result = await pollerObject(c.env, name).discardDeadLetter(
      meantLife(c),
      key,
      body.value.reason,
    );
    if (result.outcome === 'refused') return c.json({ error: result.error }, result.status);
    return result.outcome === 'discarded' ? c.json(result, 200) : c.json(result, 404);
  });
