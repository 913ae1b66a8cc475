import { listDurableObjectIds } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { AuditReport } from '../../src/demo/audit.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { newPoller } from './poller.ts';

describe('the built-in demo', () => {
  it('serves seed-shaped pages: date_from inclusive, oldest first, with a cursor', async () => {
    const upstream = env.DEMO_UPSTREAM.get(
      env.DEMO_UPSTREAM.idFromName(`demo-${crypto.randomUUID()}`),
    );
    await upstream.backfill(Date.now() - 60_000, Date.now() - 1_000);
    const page = await upstream.sessions({
      from: Date.now() - 60_000,
      to: null,
      cursor: null,
      limit: 10,
    });
    expect(page.ok).toBe(true);
    if (!page.ok) return;
    expect(page.sessions).toHaveLength(10);
    expect(page.next_cursor).not.toBeNull();
    const times = page.sessions.map((s) => Date.parse(s.updated_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('answers 401 without the read token, and 400 to a request without a valid date_from', async () => {
    const url = 'https://tidemark.test/demo/sessions?date_from=soon';
    expect((await exports.default.fetch(url)).status).toBe(401); // behind the read token too
    const headers = { authorization: `Bearer ${TEST_SECRETS.STATUS_TOKEN}` };
    expect((await exports.default.fetch(url, { headers })).status).toBe(400);
  });

  // Backfills and polls 20 minutes of demo traffic in real workerd: seconds of real work,
  // waited on as a condition (the poller at rest), with room for a busy 2-core machine.
  it('polls the demo upstream through the SELF binding into D1 with nothing missing below the checkpoint', {
    timeout: 60_000,
  }, async () => {
    const demo = env.DEMO_UPSTREAM.get(env.DEMO_UPSTREAM.idFromName('demo'));
    const poller = newPoller('demo_sessions');
    const start = Date.now() - 20 * 60_000;
    await demo.backfill(start, Date.now());
    await poller.setCheckpoint(start);

    await poller.tick();

    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('success');
    expect(status.counters.records_delivered).toBeGreaterThan(1_000);
    // /demo/audit reads the poller by name: point it at this test's object through its name.
    const { audit } = await import('../../src/demo/audit.ts');
    const report: AuditReport = await audit(
      {
        ...env,
        POLLER: { ...env.POLLER, idFromName: () => poller.stub().id, get: () => poller.stub() },
      } as unknown as Env,
      'demo_sessions',
    );
    expect(report.produced_below_checkpoint).toBeGreaterThan(1_000);
    expect(report.missing_below_checkpoint).toBe(0);
  });

  it('counts nothing produced before the poller started as missing: an audit before the first tick, then ticks, reports 0', {
    timeout: 60_000,
  }, async () => {
    const demo = env.DEMO_UPSTREAM.get(env.DEMO_UPSTREAM.idFromName('demo'));
    const poller = newPoller('demo_sessions');
    const auditOf = async () => {
      const { audit } = await import('../../src/demo/audit.ts');
      return audit(
        {
          ...env,
          POLLER: { ...env.POLLER, idFromName: () => poller.stub().id, get: () => poller.stub() },
        } as unknown as Env,
        'demo_sessions',
      );
    };
    // The audit is called first (as `npm start` prints it): the upstream has been producing
    // for a while before the poller's first run, whose start is then its checkpoint.
    await demo.backfill(Date.now() - 5 * 60_000, Date.now());
    expect((await auditOf()).missing_below_checkpoint).toBe(0);

    await poller.tick();
    await demo.backfill(Date.now() - 5_000, Date.now());
    await poller.tick();

    const report = await auditOf();
    const status = await poller.status();
    expect(status.started_from).not.toBeNull();
    expect(report.started_from).toBe(status.started_from);
    expect(report.missing_below_checkpoint).toBe(0);
  });

  it('answers 404 to /demo/audit for a poller not in POLLERS, and creates no object for it', async () => {
    const headers = { authorization: `Bearer ${TEST_SECRETS.STATUS_TOKEN}` };
    const name = `no-such-poller-${crypto.randomUUID()}`;
    const response = await exports.default.fetch(
      `https://tidemark.test/demo/audit?poller=${encodeURIComponent(name)}`,
      { headers },
    );
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: `no poller "${name}" in POLLERS` });
    const id = env.POLLER.idFromName(name);
    expect((await listDurableObjectIds(env.POLLER)).some((object) => object.equals(id))).toBe(
      false,
    );
  });
});
