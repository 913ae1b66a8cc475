import { exports } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
const { ADMIN_TOKEN, STATUS_TOKEN } = TEST_SECRETS;
const NUDGE = 'nudge-token-3f9a1c7e5b2d';
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

function call(method: string, path: string, options: { token?: string; body?: string } = {}) {
  return exports.default.fetch(`https://tidemark.test${path}`, {
    method,
    headers: {
      'content-type': 'application/json',
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
}

const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

/** A runtime poller of the fake upstream, whose own ticks are an hour apart, with a nudge token. */
async function nudgeable(options: { token?: string | null } = {}) {
  const name = unique('nudged');
  const created = await call('PUT', `/pollers/${name}`, {
    token: ADMIN_TOKEN,
    body: JSON.stringify({
      every: '1h',
      start_from: new Date(Date.now() - MINUTE).toISOString(),
      source: {
        url: 'https://upstream.test/v1/sessions',
        from_param: 'date_from',
        items: 'sessions',
        headers: { Authorization: 'Bearer ${UPSTREAM_TOKEN}' },
        next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
      },
      deliver: { type: 'webhook', url: 'https://receiver.test/hooks', secret: '${WEBHOOK_SECRET}' },
    }),
  });
  expect(created.status).toBe(201);
  const token = options.token === undefined ? NUDGE : options.token;
  if (token !== null) {
    const set = await call('PUT', `/pollers/${name}/secrets/NUDGE_TOKEN`, {
      token: ADMIN_TOKEN,
      body: JSON.stringify({ value: token }),
    });
    expect(set.status).toBe(201);
  }
  return { name, poller: newPoller(name, name) };
}

const nudgeRuns = async (poller: ReturnType<typeof newPoller>) =>
  (await poller.runs()).filter((run) => run.trigger === 'nudge');

describe('POST /pollers/:name/nudge', () => {
  it('with the poller’s NUDGE_TOKEN as ?token= (a webhook that sets no header), starts a run at once; the body is ignored', async () => {
    const { name, poller } = await nudgeable();
    upstream.add('s1', Date.now() - 30_000);
    const before = Date.now();
    const response = await call('POST', `/pollers/${name}/nudge?token=${NUDGE}`, {
      body: JSON.stringify({ type: 'invoice.paid', checkpoint: '1970-01-01T00:00:00Z' }),
    });
    expect(response.status).toBe(202);
    const reply = (await response.json()) as { outcome: string; run_at: string };
    expect(reply.outcome).toBe('scheduled');
    expect(Date.parse(reply.run_at) - before).toBeLessThan(1_000);
    await poller.settle();
    const runs = await nudgeRuns(poller);
    expect(runs).toMatchObject([{ outcome: 'success' }]);
    expect((runs[0]?.startedAt ?? Number.POSITIVE_INFINITY) - before).toBeLessThan(1_000);
    expect(receiver.ids()).toContain('s1');
    const status = await poller.status();
    expect(status.freshness?.nudges).toMatchObject({ received: 1, acted_on: 1, pending: false });
    expect(status.checkpoint).not.toBe('1970-01-01T00:00:00.000Z');
  });

  it('takes the token as a bearer header too, and ADMIN_TOKEN (header only)', async () => {
    const { name, poller } = await nudgeable();
    expect((await call('POST', `/pollers/${name}/nudge`, { token: NUDGE })).status).toBe(202);
    await poller.settle();
    expect((await call('POST', `/pollers/${name}/nudge`, { token: ADMIN_TOKEN })).status).toBe(202);
    expect((await poller.status()).freshness?.nudges.received).toBe(2);
  });

  it('answers 401 to a wrong, missing or read-only token, and to ADMIN_TOKEN in the query, and starts nothing', async () => {
    const { name, poller } = await nudgeable();
    const refused = [
      call('POST', `/pollers/${name}/nudge?token=wrong-${NUDGE}`),
      call('POST', `/pollers/${name}/nudge`, { token: `${NUDGE}x` }),
      call('POST', `/pollers/${name}/nudge`),
      call('POST', `/pollers/${name}/nudge?token=`),
      call('POST', `/pollers/${name}/nudge`, { token: STATUS_TOKEN }),
      call('POST', `/pollers/${name}/nudge?token=${ADMIN_TOKEN}`),
    ];
    for (const response of await Promise.all(refused)) {
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await response.text()).not.toContain(NUDGE);
    }
    await poller.settle();
    expect(await nudgeRuns(poller)).toEqual([]);
    expect((await poller.status()).freshness?.nudges.received).toBe(0);
  });

  it('answers 401 when the poller has no NUDGE_TOKEN, whatever is presented', async () => {
    const { name } = await nudgeable({ token: null });
    expect((await call('POST', `/pollers/${name}/nudge?token=${NUDGE}`)).status).toBe(401);
    expect((await call('POST', `/pollers/${name}/nudge?token=undefined`)).status).toBe(401);
  });

  it('does not tell a nudge token holder which pollers exist: 401 for an unknown name, 404 only to an admin', async () => {
    expect((await call('POST', `/pollers/nobody-here/nudge?token=${NUDGE}`)).status).toBe(401);
    expect((await call('POST', '/pollers/nobody-here/nudge', { token: ADMIN_TOKEN })).status).toBe(
      404,
    );
  });

  it('a paused poller takes the nudge (202, ignored: paused) and runs nothing, now or later', async () => {
    const { name, poller } = await nudgeable();
    const paused = await call('POST', `/pollers/${name}/pause`, {
      token: ADMIN_TOKEN,
      body: JSON.stringify({ reason: 'maintenance' }),
    });
    expect(paused.status).toBe(200);
    const response = await call('POST', `/pollers/${name}/nudge?token=${NUDGE}`);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ outcome: 'ignored', reason: 'paused' });
    await poller.settle();
    expect(await nudgeRuns(poller)).toEqual([]);
    expect(upstream.requests).toEqual([]);
    expect(await poller.alarmAt()).toBeNull();
    expect((await poller.status()).freshness?.nudges).toMatchObject({ received: 1, ignored: 1 });
  });

  it('a storm of nudges coalesces: 30 at once start one run, and at most one more after min_interval', async () => {
    const { name, poller } = await nudgeable();
    const replies = await Promise.all(
      Array.from({ length: 30 }, () => call('POST', `/pollers/${name}/nudge?token=${NUDGE}`)),
    );
    expect(replies.map((response) => response.status)).toEqual(Array(30).fill(202));
    await poller.settle();
    const runs = await nudgeRuns(poller);
    expect(runs).toHaveLength(1);
    const { nudges } = (await poller.status()).freshness ?? {};
    expect(nudges?.received).toBe(30);
    expect(nudges?.acted_on).toBe(1);
    expect((nudges?.coalesced ?? 0) + (nudges?.pending ? 1 : 0)).toBe(29);
    // If one is still pending, its run waits for min_interval (5 s) after the first run.
    const alarm = await poller.alarmAt();
    if (nudges?.pending) {
      expect(alarm).toBeGreaterThanOrEqual((runs[0]?.startedAt ?? 0) + 5_000 - 50);
    }
  });
});

describe('observed lateness in status and /metrics (the SQLite store)', () => {
  it('a record that shows up 6 s late is measured, warned about above half of lag_allowance (10s), and exported as a histogram', async () => {
    const poller = newPoller('late', 'late');
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.add('on-time', Date.now() - 30_000);
    const stamped = Date.now() - 6_000;
    const late = upstream.add('late', stamped, { visibleAt: Date.now() + 10 * MINUTE });
    await poller.tick();
    expect(receiver.ids()).toEqual(['on-time']);
    late.visibleAt = 0; // the replica catches up
    await poller.tick();
    expect(receiver.ids()).toEqual(['on-time', 'late']);

    const status = await poller.status();
    const lateness = status.freshness?.lateness;
    expect(lateness?.last_24h.count).toBe(1);
    // T of the first tick minus its updated_at: 6 s and the moment the tick took to start.
    expect(lateness?.last_24h.max_seconds).toBeGreaterThanOrEqual(6);
    expect(lateness?.last_24h.max_seconds).toBeLessThan(8);
    expect(lateness?.risk).toBe('warning');
    expect(status.freshness?.lag_allowance).toBe('10s');
    expect(status.state).toBe('warning');
    expect(status.at_risk).toBe(false);
    expect(status.warnings.join('\n')).toMatch(
      /observed lateness: .* more than half of lag_allowance \(10s\): raise lag_allowance to 1[2-6]s/,
    );

    const { default: parse } = await import('parse-prometheus-text-format');
    const response = await call('GET', '/metrics', { token: STATUS_TOKEN });
    const text = await response.text();
    const families = parse(text); // the whole exposition parses, the histogram as one
    const family = (name: string) => families.find((f) => f.name === name);
    expect(family('tidemark_lateness_seconds')?.type).toBe('HISTOGRAM');
    // That parser folds a histogram's label sets into one: its lines are read as written.
    const lines = text.split('\n').filter((line) => line.includes('{poller="late"'));
    expect(lines.filter((line) => line.startsWith('tidemark_lateness_seconds'))).toEqual([
      'tidemark_lateness_seconds_bucket{poller="late",le="0.25"} 0',
      'tidemark_lateness_seconds_bucket{poller="late",le="1"} 0',
      'tidemark_lateness_seconds_bucket{poller="late",le="4"} 0',
      'tidemark_lateness_seconds_bucket{poller="late",le="16"} 1',
      'tidemark_lateness_seconds_bucket{poller="late",le="64"} 1',
      'tidemark_lateness_seconds_bucket{poller="late",le="256"} 1',
      'tidemark_lateness_seconds_bucket{poller="late",le="1024"} 1',
      'tidemark_lateness_seconds_bucket{poller="late",le="4096"} 1',
      'tidemark_lateness_seconds_bucket{poller="late",le="+Inf"} 1',
      expect.stringMatching(/^tidemark_lateness_seconds_sum\{poller="late"\} [67](\.\d+)?$/),
      'tidemark_lateness_seconds_count{poller="late"} 1',
    ]);
    const value = (name: string) =>
      family(name)?.metrics.find((metric) => metric.labels?.poller === 'late')?.value;
    expect(value('tidemark_lag_allowance_seconds')).toBe('10');
    expect(value('tidemark_lateness_warning')).toBe('1');
    expect(value('tidemark_at_risk')).toBe('0');

    // The poller's dashboard page: the lateness next to lag_allowance, and the warning.
    const page = await (
      await call('GET', '/dashboard/pollers/late/panel', { token: STATUS_TOKEN })
    ).text();
    expect(page).toMatch(
      /<dt>Observed lateness<\/dt><dd>p50 [\d.]+ s, p99 [\d.]+ s, max [67][\d.]* s over the last 24 h \(1 late record\), against lag_allowance 10s \(\d+%\); suggested: 1[2-6]s<\/dd>/,
    );
    expect(page).toContain('<dt>Nudges</dt><dd>0 received');
    expect(page).toContain('observed lateness: records became visible up to');
  });

  it('a record later than lag_allowance, caught only by overlap, is a near miss: at risk, loudly', async () => {
    const poller = newPoller('late', 'late');
    await poller.setCheckpoint(Date.now() - MINUTE);
    const late = upstream.add('later', Date.now() - 12_000, {
      visibleAt: Date.now() + 10 * MINUTE,
    });
    await poller.tick(); // C = T − 10 s: "later" (T − 12 s) is below it now
    late.visibleAt = 0;
    await poller.tick(); // overlap (10 s) reads below C and finds it
    expect(receiver.ids()).toEqual(['later']);
    const status = await poller.status();
    expect(status.at_risk).toBe(true);
    expect(status.freshness?.lateness).toMatchObject({
      risk: 'at_risk',
      last_24h: { near_misses: 1 },
      last_near_miss: { id: 'later' },
    });
    expect(status.warnings.join('\n')).toMatch(/^NEAR MISS, at risk: 1 update in the last 24 h/m);
  });
});
