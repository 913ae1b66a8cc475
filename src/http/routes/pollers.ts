import { createRoute, z } from '@hono/zod-openapi';
import { runView } from '../../poller/status.ts';
import { knownPoller, meantLife, pollerObject } from '../known-poller.ts';
import { adminRefusals, guarded, readRefusals } from '../openapi/access.ts';
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
import { Outcome, RunViewSchema } from '../openapi/run-view.ts';
import { readJson } from '../read-json.ts';

const pauseBody = z.strictObject({ reason: z.string().trim().max(500).optional() });

const reason = z.string().trim().min(1, 'say why: it is kept in the audit log').max(500);

/**
 * Where to move a time checkpoint; or, for a poller with source.resume (whose checkpoint is
 * a token), a resync. One object, so each key's problem is named as for any other body.
 */
const checkpointBody = z
  .strictObject({
    at: z.iso
      .datetime({ offset: true, message: 'must be an ISO 8601 time, e.g. "2026-01-01T00:00:00Z"' })
      .optional(),
    resync: z.literal(true).optional(),
    reason,
    force: z.boolean().default(false),
  })
  .superRefine(
    (body, ctx) => {
      if ((body.at === undefined) === (body.resync === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['at'],
          message: 'send "at" (a time), or "resync": true for a poller with source.resume',
        });
      }
      if (body.resync === true && body.force === true) {
        ctx.addIssue({ code: 'custom', path: ['force'], message: 'goes with "at" only' });
      }
      // Said beside the other keys' problems (a body of {} lacks both "at" and "reason").
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  );

const read = guarded('read', knownPoller);
const admin = guarded('admin', knownPoller);

const runs = createRoute({
  method: 'get',
  path: '/{name}/runs',
  summary: "A poller's last 100 runs, newest first",
  ...read,
  request: { params: PollerName },
  responses: {
    200: json(z.object({ runs: z.array(RunViewSchema) }), 'The run history.'),
    404: unknownPollerResponse,
    ...readRefusals,
  },
});

const run = createRoute({
  method: 'get',
  path: '/{name}/runs/{id}',
  summary: 'One run of the history, by its id',
  ...read,
  request: { params: PollerName.extend({ id: z.string() }) },
  responses: {
    200: json(RunViewSchema, 'The run.'),
    400: errorResponse('An id that is not a positive integer.'),
    404: errorResponse('No such poller, or no such run in the history kept.'),
    ...readRefusals,
  },
});

const runNow = createRoute({
  method: 'post',
  path: '/{name}/run',
  summary: 'Run the poller now, and answer with the run',
  ...admin,
  request: {
    params: PollerName,
    query: z.object({
      // npm start's first run of each poller: `startup` in the history, and no audit line.
      trigger: z.enum(['manual', 'startup']).default('manual'),
    }),
  },
  responses: {
    200: json(z.object({ outcome: z.string(), run: RunViewSchema }), 'It ran: its history line.'),
    404: unknownPollerResponse,
    409: json(
      Outcome,
      'Not run: lease_held (with the holder), rate_limited (with retry_at), paused, or misconfigured (with errors).',
    ),
    ...adminRefusals,
  },
});

const reconcileAnswers = {
  202: json(Outcome, 'Requested (or confirmed): the run that does it is scheduled.'),
  404: errorResponse('No such poller, or it has no reconcile.'),
  409: json(
    z.union([ErrorBody, Outcome]),
    'Nothing held to confirm (an error), or misconfigured (an outcome with its errors).',
  ),
  ...adminRefusals,
};

const reconcile = createRoute({
  method: 'post',
  path: '/{name}/reconcile',
  summary: 'Start a reconciliation now',
  ...admin,
  request: { params: PollerName },
  responses: reconcileAnswers,
});

const confirm = createRoute({
  method: 'post',
  path: '/{name}/reconcile/confirm',
  summary: 'Confirm the deletes a reconciliation held back (its delete cap)',
  ...admin,
  request: { params: PollerName },
  responses: reconcileAnswers,
});

const pause = createRoute({
  method: 'post',
  path: '/{name}/pause',
  summary: 'Pause a poller (no run starts until it is resumed)',
  ...admin,
  request: {
    params: PollerName,
    body: jsonBody(pauseBody, 'Optional: why, kept in the audit log.', false),
  },
  responses: {
    200: json(z.object({ paused: z.boolean() }), 'Paused.'),
    400: errorResponse('A body that is not JSON or not { reason }.'),
    404: unknownPollerResponse,
    409: otherLifeResponse,
    ...adminRefusals,
  },
});

const resume = createRoute({
  method: 'post',
  path: '/{name}/resume',
  summary: 'Resume a paused poller',
  ...admin,
  request: { params: PollerName },
  responses: {
    200: json(z.object({ paused: z.boolean() }), 'Resumed.'),
    404: unknownPollerResponse,
    409: otherLifeResponse,
    ...adminRefusals,
  },
});

const checkpoint = createRoute({
  method: 'put',
  path: '/{name}/checkpoint',
  summary:
    'Move the checkpoint (backfill or skip ahead), or resync a resume poller, with a reason for the audit log',
  description:
    'With `at`: moves a time checkpoint (backward: a backfill; forward needs `force`). With `"resync": true` (a poller with source.resume): clears its token and the page cursor of the round in progress, so the next round starts from source.url and lists everything, sending only what changed (a manual resync; with resume.resync_deletes its deletes are found). Either is refused (409) while a run holds the lease, and written to the audit log with the reason.',
  ...admin,
  request: {
    params: PollerName,
    body: jsonBody(
      checkpointBody,
      'Where to, and why; force to move it forward past unread data. Or { resync: true, reason } for a poller with source.resume.',
    ),
  },
  responses: {
    200: json(
      z.union([
        z.object({
          outcome: z.literal('moved'),
          from: z.string().nullable(),
          to: z.string(),
          backfill: z.boolean(),
        }),
        z.object({
          outcome: z.literal('resync'),
          token_stored_at: z.string().nullable(),
          round_pages: z.number(),
        }),
      ]),
      'Moved, or (resync) the token cleared: when it had been stored, and the pages of the round in progress dropped.',
    ),
    400: errorResponse(
      'A body that is not JSON, a time that is not allowed, a time for a resume poller, or a resync for one without source.resume.',
    ),
    404: unknownPollerResponse,
    409: errorResponse(
      'A run holds the lease, or the poller was deleted and created again meanwhile.',
    ),
    ...adminRefusals,
  },
});

/**
 * The admin API of one poller: run now, pause, resume, move the checkpoint (ADMIN_TOKEN),
 * and its run history (read).
 */
export const pollerRoutes = apiRoutes()
  .openapi(runs, async (c) => {
    const history = await pollerObject(c.env, c.req.valid('param').name).runs(100);
    return c.json({ runs: history.map(runView) }, 200);
  })
  .openapi(run, async (c) => {
    const { name, id: param } = c.req.valid('param');
    const id = Number(param);
    if (!Number.isSafeInteger(id) || id < 1) {
      return c.json(
        { error: 'a run id is a positive integer (the id in GET /pollers/:name/runs)' },
        400,
      );
    }
    const found = await pollerObject(c.env, name).run(id);
    if (found === null) {
      return c.json(
        { error: `no run ${id}: not run yet, or older than the history kept (the last 100)` },
        404,
      );
    }
    return c.json(runView(found), 200);
  })
  .openapi(runNow, async (c) => {
    const { trigger } = c.req.valid('query');
    const reply = await pollerObject(c.env, c.req.valid('param').name).runNow(trigger);
    if (reply.outcome === 'ran') {
      return c.json({ outcome: reply.run.outcome, run: runView(reply.run) }, 200);
    }
    if (reply.outcome === 'misconfigured') return c.json(reply, 409);
    if (reply.outcome === 'skipped' && reply.reason === 'lease_held') {
      const { lease } = reply;
      const holder = {
        epoch: lease.epoch,
        trigger: lease.trigger,
        started_at: lease.startedAt === null ? null : new Date(lease.startedAt).toISOString(),
        expires_at: lease.expiresAt === null ? null : new Date(lease.expiresAt).toISOString(),
      };
      return c.json({ outcome: 'skipped', reason: 'lease_held', lease: holder }, 409);
    }
    if (reply.outcome === 'skipped' && reply.reason === 'backing_off') {
      // The upstream said when it may be asked again (Retry-After, a spent quota).
      const at = new Date(reply.retryAt).toISOString();
      return c.json({ outcome: 'skipped', reason: 'rate_limited', retry_at: at }, 409);
    }
    return c.json(reply, 409);
  })
  .openapi(reconcile, async (c) => {
    const reply = await pollerObject(c.env, c.req.valid('param').name).reconcile('start');
    if (reply.outcome === 'refused') return c.json({ error: reply.error }, reply.status);
    if (reply.outcome === 'misconfigured') return c.json(reply, 409);
    return c.json(reply, 202);
  })
  .openapi(confirm, async (c) => {
    const reply = await pollerObject(c.env, c.req.valid('param').name).reconcile('confirm');
    if (reply.outcome === 'refused') return c.json({ error: reply.error }, reply.status);
    if (reply.outcome === 'misconfigured') return c.json(reply, 409);
    return c.json(reply, 202);
  })
  .openapi(pause, async (c) => {
    const body = await readJson(c, pauseBody, { allowEmpty: true });
    if (!body.ok) return c.json({ error: body.error }, 400);
    const { name } = c.req.valid('param');
    const reason = body.value.reason ?? null;
    const reply = await pollerObject(c.env, name).setPaused(meantLife(c), true, reason);
    if ('outcome' in reply) return c.json({ error: reply.error }, reply.status);
    return c.json(reply, 200);
  })
  .openapi(resume, async (c) => {
    const { name } = c.req.valid('param');
    const reply = await pollerObject(c.env, name).setPaused(meantLife(c), false, null);
    if ('outcome' in reply) return c.json({ error: reply.error }, reply.status);
    return c.json(reply, 200);
  })
  .openapi(checkpoint, async (c) => {
    const body = await readJson(c, checkpointBody);
    if (!body.ok) return c.json({ error: body.error }, 400);
    const { name } = c.req.valid('param');
    const value = body.value;
    const request =
      value.at === undefined
        ? { resync: true as const, reason: value.reason }
        : { at: Date.parse(value.at), reason: value.reason, force: value.force };
    const result = await pollerObject(c.env, name).moveCheckpoint(meantLife(c), request);
    if (result.outcome === 'refused') return c.json({ error: result.error }, result.status);
    return c.json(result, 200);
  });
