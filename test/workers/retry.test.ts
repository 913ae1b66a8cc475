import { beforeEach, describe, expect, it } from 'vitest';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

describe('R12: failing politely', () => {
  it('books a retry through the alarm with growing backoff after upstream 5xx, and holds off cron ticks meanwhile', async () => {
    const poller = newPoller('seed');
    await poller.setCheckpoint(Date.now() - MINUTE);
    const delays: number[] = [];
    for (let attempt = 0; attempt < 4; attempt += 1) {
      upstream.respondOnce(() => new Response('upstream down', { status: 500 }));
      if (attempt === 0) await poller.tick();
      else {
        await poller.retryNow();
      }
      const status = await poller.status();
      expect(status.last_run?.outcome).toBe('failed');
      expect(status.next_wakeup?.reason).toBe('retry');
      expect(status.next_alarm_at).toBe(status.next_wakeup?.at);
      delays.push(
        Date.parse(status.next_wakeup?.at ?? '') - Date.parse(status.last_run?.finished_at ?? ''),
      );
    }
    // Equal jitter: each delay lies in [base·2^(n−1)/2, base·2^(n−1)] with base 5s.
    delays.forEach((delay, index) => {
      const ceiling = 5_000 * 2 ** index;
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2 - 5);
      expect(delay).toBeLessThanOrEqual(ceiling + 5);
    });
    expect((await poller.status()).consecutive_failures).toBe(4);

    const requests = upstream.requests.length;
    const reply = await poller.trigger();
    expect(reply).toMatchObject({ outcome: 'skipped', reason: 'backing_off' });
    expect(upstream.requests.length).toBe(requests);

    await poller.retryNow();
    const recovered = await poller.status();
    expect(recovered.last_run?.outcome).toBe('success');
    expect(recovered.consecutive_failures).toBe(0);
    expect(recovered.next_alarm_at).toBeNull();
  });

  it('never retries before the Retry-After of a 429', async () => {
    const poller = newPoller('seed');
    upstream.respondOnce(
      () => new Response('slow down', { status: 429, headers: { 'retry-after': '120' } }),
    );
    await poller.tick();
    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('failed');
    expect(status.last_run?.error).toContain('HTTP 429');
    expect(Date.parse(status.next_alarm_at ?? '')).toBeGreaterThanOrEqual(Date.now() + 119_000);
  });

  it('obeys a Retry-After given as an HTTP date on a 503', async () => {
    const poller = newPoller('seed');
    const until = new Date(Math.ceil((Date.now() + 10 * MINUTE) / 1000) * 1000);
    upstream.respondOnce(
      () =>
        new Response('maintenance', {
          status: 503,
          headers: { 'retry-after': until.toUTCString() },
        }),
    );
    await poller.tick();
    expect(Date.parse((await poller.status()).next_alarm_at ?? '')).toBeGreaterThanOrEqual(
      until.getTime(),
    );
  });

  it('reports 401 from the upstream as a configuration error and retries slowly', async () => {
    const poller = newPoller('seed');
    upstream.respondOnce(
      () => new Response('{"error":"bad token upstream-secret-7d3b"}', { status: 401 }),
    );
    await poller.tick();
    const status = await poller.status();
    expect(status.last_run?.error).toContain('HTTP 401');
    expect(status.last_run?.error).toContain('check source.url and the credentials');
    expect(Date.parse(status.next_alarm_at ?? '')).toBeGreaterThanOrEqual(Date.now() + 29 * MINUTE);
    // The secret echoed by the upstream is redacted.
    expect(JSON.stringify(status)).not.toContain('upstream-secret-7d3b');
  });

  it('fails the run with a configuration error when the receiver answers 403, instead of dead-lettering everything', async () => {
    const poller = newPoller('seed');
    const start = Date.now() - MINUTE;
    await poller.setCheckpoint(start);
    for (let i = 0; i < 20; i += 1) upstream.add(`r${i}`, Date.now() - 50_000 + i * 1_000);
    for (let i = 0; i < 20; i += 1) receiver.fail(`r${i}`, 403, 99);
    await poller.tick();
    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('failed');
    expect(status.last_run?.error).toContain(
      'delivery: POST https://receiver.test/hooks: HTTP 403',
    );
    expect(status.state).toBe('misconfigured');
    expect(status.dead_letters.count).toBe(0);
    expect(await poller.checkpoint()).toBe(start);
    expect(Date.parse(status.next_alarm_at ?? '')).toBeGreaterThanOrEqual(Date.now() + 29 * MINUTE);
  });

  it('fails the run with status, URL without secrets and a body snippet when the body is not JSON', async () => {
    const poller = newPoller('seed');
    upstream.respondOnce(
      () => new Response('<html><body>Welcome to nginx</body></html>', { status: 200 }),
    );
    await poller.tick();
    const error = (await poller.status()).last_run?.error ?? '';
    expect(error).toContain('HTTP 200 but the body is not JSON');
    expect(error).toContain('https://upstream.test/v1/sessions?');
    expect(error).toContain('Welcome to nginx');
  });

  it('fails the run when the items array is missing', async () => {
    const poller = newPoller('seed');
    upstream.respondOnce(() => Response.json({ data: [] }));
    await poller.tick();
    expect((await poller.status()).last_run?.error).toContain(
      '"sessions" is not an array of records',
    );
  });

  it('keeps a record it cannot read as a dead letter with its raw payload, and goes on', async () => {
    const poller = newPoller('seed');
    const start = Date.now() - MINUTE;
    await poller.setCheckpoint(start);
    const bad = { id: 'x', updated_at: 'yesterday', note: 'raw' };
    upstream.respondOnce(() =>
      Response.json({
        sessions: [bad, { id: 'ok', updated_at: new Date(start + 1_000).toISOString() }],
        next_cursor: null,
      }),
    );
    await poller.tick();
    const status = await poller.status();
    expect(status.last_run).toMatchObject({ outcome: 'success', records: 1, dead_lettered: 1 });
    expect(status.dead_letters.count).toBe(1);
    expect(await poller.checkpoint()).toBeGreaterThan(start);
    const [letter] = (await poller.stub().deadLetters(10)).items;
    expect(letter).toMatchObject({ kind: 'unreadable', record: bad, id: null });
    expect(letter?.error).toContain('id x: updated_at at "updated_at" is "yesterday"');
    expect(letter?.key).toMatch(/^seed:unreadable:[0-9a-f]{14}$/);
  });
});

describe('bad responses and errors a retry cannot fix', () => {
  it('fails on a paging loop (a cursor the upstream already sent) with C unchanged', async () => {
    const poller = newPoller('seed');
    const start = Date.now() - MINUTE;
    await poller.setCheckpoint(start);
    const page = (cursor: string) => () =>
      Response.json({
        sessions: [{ id: `s-${cursor}`, updated_at: new Date(start + 1_000).toISOString() }],
        next_cursor: cursor,
      });
    upstream.respondOnce(page('abc'));
    upstream.respondOnce(page('def'));
    upstream.respondOnce(page('abc'));
    await poller.tick();
    const status = await poller.status();
    expect(status.last_run?.error).toContain('poller "seed": page 3: paging loop');
    expect(status.last_run?.error).toContain('(abc)');
    expect(await poller.checkpoint()).toBe(start);
  });

  it('fails when the items path holds something other than an array', async () => {
    const poller = newPoller('seed');
    upstream.respondOnce(() => Response.json({ sessions: { id: 1 } }));
    await poller.tick();
    expect((await poller.status()).last_run?.error).toContain(
      'HTTP 200 but "sessions" is not an array of records; body "{\\"sessions\\":{\\"id\\":1}}"',
    );
  });

  it('shows an upstream 401 as a misconfigured poller', async () => {
    const poller = newPoller('seed');
    upstream.respondOnce(() => new Response('unauthorized', { status: 401 }));
    await poller.tick();
    const status = await poller.status();
    expect(status.state).toBe('misconfigured');
    expect(status.last_run?.error).toMatch(
      /^poller "seed": page 1: GET https:\/\/upstream\.test\/v1\/sessions\?.*: HTTP 401/,
    );
  });

  it('shows a missing secret as a misconfigured poller that never runs', async () => {
    const poller = newPoller('needs_secret');
    const reply = await poller.trigger();
    expect(reply).toMatchObject({ outcome: 'misconfigured' });
    const status = await poller.status();
    expect(status.state).toBe('misconfigured');
    expect(status.config_errors[0]).toContain('${MISSING_TOKEN} is not set');
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('R11: clock skew', () => {
  it('measures the upstream clock from its Date header and warns when it is off by more than lag_allowance', async () => {
    const poller = newPoller('seed'); // lag_allowance 0s
    const behind = new Date(Date.now() - 10 * MINUTE).toUTCString();
    upstream.respondOnce(() =>
      Response.json({ sessions: [], next_cursor: null }, { headers: { date: behind } }),
    );
    await poller.tick();
    const status = await poller.status();
    expect(status.upstream_skew_seconds).toBeLessThan(-590);
    expect(status.upstream_skew_seconds).toBeGreaterThan(-610);
    expect(status.warnings[0]).toContain("the upstream's clock is");
    expect(status.warnings[0]).toContain('behind ours, more than lag_allowance (0s)');
  });

  it('does not warn about a skew within the Date header’s one-second precision', async () => {
    const poller = newPoller('seed');
    upstream.respondOnce(() =>
      Response.json(
        { sessions: [], next_cursor: null },
        { headers: { date: new Date().toUTCString() } },
      ),
    );
    await poller.tick();
    const status = await poller.status();
    expect(Math.abs(status.upstream_skew_seconds ?? 99)).toBeLessThanOrEqual(1);
    expect(status.warnings).toEqual([]);
  });
});
