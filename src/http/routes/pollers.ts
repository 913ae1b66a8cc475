import { Hono } from 'hono';
import * as z from 'zod';
import { runView } from '../../poller/status.ts';
import { requireToken } from '../auth.ts';
import { knownPoller, pollerObject } from '../known-poller.ts';
import { readJson } from '../read-json.ts';

const pauseBody = z.strictObject({ reason: z.string().trim().max(500).optional() });

const checkpointBody = z.strictObject({
  at: z.iso.datetime({
    offset: true,
    message: 'must be an ISO 8601 time, e.g. "2026-01-01T00:00:00Z"',
  }),
  reason: z.string().trim().min(1, 'say why: it is kept in the audit log').max(500),
  force: z.boolean().default(false),
});

/**
 * The admin API of one poller: run now, pause, resume, move the checkpoint (ADMIN_TOKEN),
 * and its run history (read).
 */
export const pollerRoutes = new Hono<{ Bindings: Env }>()
  .get('/:name/runs', requireToken('read'), knownPoller, async (c) => {
    const runs = await pollerObject(c.env, c.req.param('name')).runs(100);
    return c.json({ runs: runs.map(runView) });
  })
  .get('/:name/runs/:id', requireToken('read'), knownPoller, async (c) => {
    const id = Number(c.req.param('id'));
    if (!Number.isSafeInteger(id) || id < 1) {
      return c.json(
        { error: 'a run id is a positive integer (the id in GET /pollers/:name/runs)' },
        400,
      );
    }
    const run = await pollerObject(c.env, c.req.param('name')).run(id);
    if (run === null) {
      return c.json(
        { error: `no run ${id}: not run yet, or older than the history kept (the last 100)` },
        404,
      );
    }
    return c.json(runView(run));
  })
  .post('/:name/run', requireToken('admin'), knownPoller, async (c) => {
    const name = c.req.param('name');
    const reply = await pollerObject(c.env, name).runNow();
    if (reply.outcome === 'ran')
      return c.json({ outcome: reply.run.outcome, run: runView(reply.run) });
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
  .post('/:name/reconcile', requireToken('admin'), knownPoller, async (c) => {
    const reply = await pollerObject(c.env, c.req.param('name')).reconcile('start');
    if (reply.outcome === 'refused') return c.json({ error: reply.error }, reply.status);
    return c.json(reply, reply.outcome === 'misconfigured' ? 409 : 202);
  })
  .post('/:name/reconcile/confirm', requireToken('admin'), knownPoller, async (c) => {
    const reply = await pollerObject(c.env, c.req.param('name')).reconcile('confirm');
    if (reply.outcome === 'refused') return c.json({ error: reply.error }, reply.status);
    return c.json(reply, reply.outcome === 'misconfigured' ? 409 : 202);
  })
  .post('/:name/pause', requireToken('admin'), knownPoller, async (c) => {
    const body = await readJson(c, pauseBody, { allowEmpty: true });
    if (!body.ok) return body.response;
    const name = c.req.param('name');
    return c.json(await pollerObject(c.env, name).setPaused(true, body.value.reason ?? null));
  })
  .post('/:name/resume', requireToken('admin'), knownPoller, async (c) => {
    const name = c.req.param('name');
    return c.json(await pollerObject(c.env, name).setPaused(false, null));
  })
  .put('/:name/checkpoint', requireToken('admin'), knownPoller, async (c) => {
    const body = await readJson(c, checkpointBody);
    if (!body.ok) return body.response;
    const name = c.req.param('name');
    const request = {
      at: Date.parse(body.value.at),
      reason: body.value.reason,
      force: body.value.force,
    };
    const result = await pollerObject(c.env, name).moveCheckpoint(request);
    if (result.outcome === 'refused') return c.json({ error: result.error }, result.status);
    return c.json(result);
  });
