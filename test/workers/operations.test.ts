import { exports } from 'cloudflare:workers';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { beforeEach, describe, expect, it } from 'vitest';
import { firstRunRequest } from '../../scripts/first-run.ts';
import { call } from '../support/call.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
const { ADMIN_TOKEN, STATUS_TOKEN } = TEST_SECRETS;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

describe('admin API', () => {
  it('runs now and answers with the outcome; a second call during a run is skipped with the lease holder', async () => {
    const poller = newPoller('handled', 'handled');
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.add('h1', Date.now() - 30_000);
    const response = await call('POST', '/pollers/handled/run', ADMIN_TOKEN);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      outcome: 'success',
      run: { trigger: 'manual', records: 1 },
    });

    const held = upstream.holdNext();
    const running = call('POST', '/pollers/handled/run', ADMIN_TOKEN);
    await held.arrived();
    const skipped = await call('POST', '/pollers/handled/run', ADMIN_TOKEN);
    expect(skipped.status).toBe(409);
    expect(await skipped.json()).toMatchObject({
      outcome: 'skipped',
      reason: 'lease_held',
      lease: { trigger: 'manual' },
    });
    held.release();
    expect((await running).status).toBe(200);
  });

  it("npm start's first run is a startup run in status and history, and no audit line", async () => {
    const poller = newPoller('handled', 'handled');
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.add('h1', Date.now() - 30_000);
    // The object is shared with the other tests here: its audit log may hold their actions.
    const before = (await poller.status()).audit;
    const first = firstRunRequest('https://tidemark.test', 'handled', ADMIN_TOKEN);
    const response = await exports.default.fetch(first);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ run: { trigger: 'startup', records: 1 } });
    const status = await poller.status();
    expect(status.last_run).toMatchObject({ trigger: 'startup' });
    expect((await poller.runs())[0]).toMatchObject({ trigger: 'startup' });
    expect(status.audit).toEqual(before);
    // Only the start script's flag makes it one: a reader's token may not ask for it.
    const read = await call('POST', '/pollers/handled/run?trigger=startup', STATUS_TOKEN);
    expect(read.status).toBe(403);
    await call('POST', '/pollers/handled/run', ADMIN_TOKEN);
    const after = (await poller.status()).audit;
    expect(after).toHaveLength(Math.min(before.length + 1, 20));
    expect(after[0]).toMatchObject({ action: 'run.manual' });
  });

  it('pauses: cron and manual triggers are skipped and say so, until resumed', async () => {
    const poller = newPoller('tiny_budget', 'tiny_budget');
    expect(
      await (
        await call(
          'POST',
          '/pollers/tiny_budget/pause',
          ADMIN_TOKEN,
          '{"reason":"upstream maintenance"}',
        )
      ).json(),
    ).toEqual({ paused: true });
    expect(await poller.trigger('cron')).toMatchObject({ outcome: 'skipped', reason: 'paused' });
    expect((await call('POST', '/pollers/tiny_budget/run', ADMIN_TOKEN)).status).toBe(409);
    let status = await poller.status();
    expect(status.state).toBe('paused');
    expect(upstream.requests).toHaveLength(0);
    expect(status.audit.find((entry) => entry.action === 'poller.paused')).toMatchObject({
      detail: { reason: 'upstream maintenance' },
    });

    await call('POST', '/pollers/tiny_budget/resume', ADMIN_TOKEN);
    expect((await poller.tick()).outcome).toBe('started');
    status = await poller.status();
    expect(status.state).not.toBe('paused');
    expect(status.audit.map((entry) => entry.action)).toEqual([
      'poller.resumed',
      'run.manual',
      'poller.paused',
    ]);
  });

  it('moves the checkpoint: refused during a run, backward is a backfill, forward needs force', async () => {
    const poller = newPoller('bounded', 'bounded');
    const start = Date.now() - 2 * 60 * MINUTE;
    await poller.setCheckpoint(start);
    upstream.add('b1', start + MINUTE);
    await poller.tick();
    expect(receiver.ids()).toEqual(['b1']);
    const at = (offset: number) => new Date(start + offset).toISOString();

    const held = upstream.holdNext();
    await poller.trigger();
    const run = poller.alarm();
    await held.arrived();
    const refused = await call(
      'PUT',
      '/pollers/bounded/checkpoint',
      ADMIN_TOKEN,
      JSON.stringify({ at: at(0), reason: 'redo' }),
    );
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: string }).error).toContain('holds the lease');
    held.release();
    await run;
    await poller.settle();

    const back = await call(
      'PUT',
      '/pollers/bounded/checkpoint',
      ADMIN_TOKEN,
      JSON.stringify({ at: at(0), reason: 'receiver lost its data' }),
    );
    expect(back.status).toBe(200);
    expect(await back.json()).toMatchObject({ outcome: 'moved', backfill: true, to: at(0) });
    await poller.tick();
    expect(receiver.ids()).toEqual(['b1', 'b1']); // a backfill delivers again

    const forward = JSON.stringify({
      at: new Date(Date.now() - 1_000).toISOString(),
      reason: 'skip',
    });
    const checkpoint = (await poller.checkpoint()) ?? 0;
    await poller.setCheckpoint(checkpoint - 10 * MINUTE);
    expect((await call('PUT', '/pollers/bounded/checkpoint', ADMIN_TOKEN, forward)).status).toBe(
      400,
    );
    const forced = JSON.stringify({
      at: new Date(Date.now() - 1_000).toISOString(),
      reason: 'skip',
      force: true,
    });
    expect((await call('PUT', '/pollers/bounded/checkpoint', ADMIN_TOKEN, forced)).status).toBe(
      200,
    );
    const audit = (await poller.status()).audit.filter(
      (entry) => entry.action === 'checkpoint.moved',
    );
    expect(audit.map((entry) => (entry.detail as { reason: string }).reason)).toEqual([
      'skip',
      'receiver lost its data',
    ]);
  });

  it('answers 400 with what is wrong to bad JSON and bad values', async () => {
    const cases: [string, string, string | undefined, string][] = [
      ['PUT', '/pollers/seed/checkpoint', 'not json', 'the body must be JSON'],
      ['PUT', '/pollers/seed/checkpoint', '{}', 'at:'],
      [
        'PUT',
        '/pollers/seed/checkpoint',
        '{"at":"yesterday","reason":"x"}',
        'must be an ISO 8601 time',
      ],
      ['PUT', '/pollers/seed/checkpoint', `{"at":"${new Date().toISOString()}"}`, 'reason:'],
      [
        'PUT',
        '/pollers/seed/checkpoint',
        `{"at":"${new Date().toISOString()}","reason":"x","force":"yes"}`,
        'force:',
      ],
      [
        'PUT',
        '/pollers/seed/checkpoint',
        `{"at":"${new Date(Date.now() + 3_600_000).toISOString()}","reason":"x"}`,
        'in the future',
      ],
      ['POST', '/pollers/seed/pause', '{"reason":5}', 'reason:'],
      ['POST', '/pollers/seed/pause', '{"why":"x"}', 'why'],
      ['DELETE', '/pollers/seed/dead-letters/k', '{}', 'reason:'],
    ];
    for (const [method, path, body, message] of cases) {
      const response = await call(method, path, ADMIN_TOKEN, body);
      expect(response.status, `${method} ${path} ${body}`).toBe(400);
      expect(JSON.stringify(await response.json())).toContain(message);
    }
    expect((await call('POST', '/pollers/nope/run', ADMIN_TOKEN)).status).toBe(404);
  });

  it('keeps a history of runs: outcome, start, duration, windows, pages, records, error', async () => {
    const poller = newPoller('seed', 'seed');
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.add('s1', Date.now() - 30_000);
    await poller.tick();
    upstream.respondOnce(() => new Response('down', { status: 500 }));
    await poller.retryNow().catch(() => {});
    await call('POST', '/pollers/seed/run', ADMIN_TOKEN);
    const { runs } = (await (await call('GET', '/pollers/seed/runs', STATUS_TOKEN)).json()) as {
      runs: {
        outcome: string;
        trigger: string;
        started_at: string;
        finished_at: string;
        windows: number;
        pages: number;
        records: number;
        error: string | null;
      }[];
    };
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs[0]).toMatchObject({ trigger: 'manual' });
    expect(runs.at(-1)).toMatchObject({
      trigger: 'cron',
      outcome: 'success',
      windows: 1,
      pages: 1,
      records: 1,
      error: null,
    });
    for (const run of runs)
      expect(Date.parse(run.finished_at)).toBeGreaterThanOrEqual(Date.parse(run.started_at));
  });
});

describe('metrics and health', () => {
  it('exposes valid Prometheus text that a real parser reads, per poller', async () => {
    const poller = newPoller('ordered', 'ordered');
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.add('m1', Date.now() - 30_000);
    await poller.tick();
    const response = await call('GET', '/metrics', STATUS_TOKEN);
    expect(response.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const families = parsePrometheusTextFormat(await response.text());
    const byName = new Map(families.map((family) => [family.name, family]));
    for (const name of [
      'tidemark_checkpoint_timestamp_seconds',
      'tidemark_lag_seconds',
      'tidemark_lease_held',
      'tidemark_runs_total',
      'tidemark_records_delivered_total',
      'tidemark_dead_letters',
      'tidemark_last_run_duration_seconds',
      'tidemark_rate_limited_until_timestamp_seconds',
    ]) {
      expect(byName.has(name), name).toBe(true);
    }
    const delivered = byName.get('tidemark_records_delivered_total');
    expect(delivered?.type).toBe('COUNTER');
    const sample = delivered?.metrics.find((metric) => metric.labels?.poller === 'ordered');
    expect(Number(sample?.value)).toBe(1);
    const success = byName
      .get('tidemark_runs_total')
      ?.metrics.find(
        (metric) => metric.labels?.poller === 'ordered' && metric.labels?.outcome === 'success',
      );
    expect(Number(success?.value)).toBe(1);
    const checkpoint = byName
      .get('tidemark_checkpoint_timestamp_seconds')
      ?.metrics.find((m) => m.labels?.poller === 'ordered');
    expect(
      Math.abs(Number(checkpoint?.value) - ((await poller.checkpoint()) ?? 0) / 1000),
    ).toBeLessThan(1);
  });

  it('flips /healthz to 503 and names a poller whose lag passes alert_after to a reader', async () => {
    const poller = newPoller('github', 'github'); // alert_after: 30m (default)
    await poller.setCheckpoint(Date.now() - 5 * MINUTE);
    let health = await call('GET', '/healthz', STATUS_TOKEN);
    expect(((await health.json()) as { at_fault: string[] }).at_fault).not.toContain('github');
    await poller.setCheckpoint(Date.now() - 45 * MINUTE);
    health = await call('GET', '/healthz', STATUS_TOKEN);
    expect(health.status).toBe(503);
    const body = (await health.json()) as { at_fault: string[]; reasons: Record<string, string[]> };
    expect(body.at_fault).toContain('github');
    expect(body.reasons.github?.[0]).toContain('more than alert_after (30m)');
  });
});

describe('dashboard panel', () => {
  it('renders every poller with its state, lag, last run, buttons, an SVG chart and the audit log', async () => {
    const poller = newPoller('stripe', 'stripe');
    await poller.setCheckpoint(Date.now() - 10 * MINUTE);
    await call(
      'POST',
      '/pollers/stripe/pause',
      ADMIN_TOKEN,
      '{"reason":"<script>alert(1)</script>"}',
    );
    const html = await (await call('GET', '/dashboard/panel', STATUS_TOKEN)).text();
    expect(html).toContain('data-poller="stripe"');
    expect(html).toContain('data-action="run"');
    expect(html).toContain('class="state paused"');
    expect(html).toContain('poller.paused');
    expect(html).not.toContain('<script>alert(1)</script>'); // escaped
    expect(html).toContain('&lt;script&gt;');
  });
});
