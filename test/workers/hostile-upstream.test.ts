import { runInDurableObject } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { startDeadline } from '../../src/deadline.ts';
import { readBody } from '../../src/sources/read-body.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { FakeStripe, FakeZendesk } from './apis.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
let upstream: FakeUpstream;
let receiver: FakeReceiver;
let zendesk: FakeZendesk;
let stripe: FakeStripe;

beforeEach(() => {
  zendesk = new FakeZendesk();
  stripe = new FakeStripe();
  ({ upstream, receiver } = installFakes({
    'acme.zendesk.test': zendesk,
    'api.stripe.test': stripe,
  }));
});

function call(method: string, path: string, token = TEST_SECRETS.ADMIN_TOKEN) {
  return exports.default.fetch(`https://tidemark.test${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(method === 'GET' ? {} : { body: '{}' }),
  });
}

describe('pages that say more is coming', () => {
  it('a page that says more but has no next id fails the window and keeps C', async () => {
    const poller = newPoller('stripe'); // last_id paging while has_more
    const start = Math.floor((Date.now() - 10 * MINUTE) / 1000) * 1000;
    await poller.setCheckpoint(start);
    stripe.add('evt_1', start + 60_000);
    stripe.respondOnce(() => Response.json({ data: [], has_more: true }));

    await poller.tick();

    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('failed');
    expect(status.last_run?.error).toContain('poller "stripe"');
    expect(status.last_run?.error).toContain('page 1');
    expect(status.last_run?.error).toContain('"has_more" is true but the page has no records');
    expect(await poller.checkpoint()).toBe(start);
    expect(status.next_wakeup?.reason).toBe('retry');
  });

  it('a page whose cursor is missing while the body says more fails the window and keeps C', async () => {
    const poller = newPoller('zendesk'); // url paging with end_of_stream
    const start = Math.floor((Date.now() - 10 * MINUTE) / 1000) * 1000;
    await poller.setCheckpoint(start);
    zendesk.respondOnce(() =>
      Response.json({
        tickets: [{ id: 1, updated_at: new Date(start + 1000).toISOString() }],
        next_page: null,
        end_of_stream: false,
      }),
    );

    await poller.tick();

    const status = await poller.status();
    expect(status.last_run?.error).toContain(
      '"end_of_stream" is false but the next page URL at "next_page" is null',
    );
    expect(await poller.checkpoint()).toBe(start);
  });
});

describe('errors inside a run', () => {
  it('a next URL that does not parse ends as a failed run with the lease released and a retry booked', async () => {
    const poller = newPoller('zendesk');
    const start = Math.floor((Date.now() - 10 * MINUTE) / 1000) * 1000;
    await poller.setCheckpoint(start);
    zendesk.respondOnce(() =>
      Response.json({
        tickets: [{ id: 1, updated_at: new Date(start + 1000).toISOString() }],
        next_page: 'https://exa mple.test/next',
        end_of_stream: false,
      }),
    );

    await poller.tick();

    const runs = await poller.runs();
    expect(runs[0]).toMatchObject({ outcome: 'failed', trigger: 'cron' });
    expect(runs[0]?.error).toContain('does not parse');
    const status = await poller.status();
    expect(status.lease.held).toBe(false);
    expect(status.next_wakeup?.reason).toBe('retry');
    expect(status.consecutive_failures).toBe(1);
    expect(await poller.checkpoint()).toBe(start);
  });
});

describe('redirects', () => {
  // The upstream is reached through workerd's own fetch (test/support/network.ts), which
  // follows a redirect by itself unless the request says otherwise.
  const throughTheNetwork = () => {
    const network = { handle: (request: Request) => env.TEST_NETWORK.fetch(request) };
    return installFakes({ 'upstream.test': network });
  };

  it('a redirect to another origin is a misconfiguration: never followed, no credentials sent there', async () => {
    ({ receiver } = throughTheNetwork());
    const poller = newPoller('redirected_away');
    const start = Date.now() - MINUTE;
    await poller.setCheckpoint(start);

    await poller.tick();

    expect(receiver.ids()).toEqual([]); // elsewhere.test's body was not taken as data
    const status = await poller.status();
    expect(status.state).toBe('misconfigured');
    expect(status.last_run?.error).toContain(
      'HTTP 302 redirect to https://elsewhere.test/sessions?',
    );
    expect(status.last_run?.error).toContain("another origin than source.url's");
    expect(await poller.checkpoint()).toBe(start);
  });

  it("a redirect within source.url's origin is followed, with the configured headers", async () => {
    ({ receiver } = throughTheNetwork());
    const poller = newPoller('redirected_here');
    await poller.setCheckpoint(Date.now() - MINUTE);

    await poller.tick();

    expect(receiver.ids()).toEqual(['upstream.test:with-credentials']);
    expect((await poller.status()).last_run?.outcome).toBe('success');
  });
});

describe('rate-limit hints from a hostile upstream', () => {
  const statusPages = async () =>
    Promise.all([
      call('GET', '/status', TEST_SECRETS.STATUS_TOKEN),
      call('GET', '/status/seed', TEST_SECRETS.STATUS_TOKEN),
      call('GET', '/metrics', TEST_SECRETS.STATUS_TOKEN),
      call('GET', '/healthz'),
    ]);

  it('a Retry-After in the year 9999 waits max_rate_limit_wait (1h), and status, pause and resume keep working', async () => {
    const poller = newPoller('seed', 'seed'); // the object status routes read for "seed"
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.respondOnce(
      () =>
        new Response('slow down', {
          status: 429,
          headers: { 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' },
        }),
    );

    await poller.tick();

    const status = await poller.status();
    const until = Date.parse(status.rate_limited_until ?? '');
    expect(until).toBeGreaterThan(Date.now() + HOUR - MINUTE);
    expect(until).toBeLessThanOrEqual(Date.now() + HOUR);
    expect(Date.parse(status.next_alarm_at ?? '')).toBeLessThanOrEqual(Date.now() + HOUR);
    for (const response of await statusPages()) expect(response.status).not.toBe(500);
    expect((await call('POST', '/pollers/seed/pause')).status).toBe(200);
    expect((await call('POST', '/pollers/seed/resume')).status).toBe(200);
    // A manual run waits for the upstream's "not before" too: 409, saying until when.
    const run = await call('POST', '/pollers/seed/run');
    expect(run.status).toBe(409);
    expect(await run.json()).toEqual({
      outcome: 'skipped',
      reason: 'rate_limited',
      retry_at: new Date(until).toISOString(),
    });
  });

  it('a Retry-After too large to be a time is ignored: the usual backoff applies', async () => {
    const poller = newPoller('seed');
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.respondOnce(
      () =>
        new Response('slow down', {
          status: 429,
          headers: { 'retry-after': '99999999999999999999' },
        }),
    );

    await poller.tick();

    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('failed');
    expect(status.rate_limited_until).toBeNull();
    expect(Date.parse(status.next_wakeup?.at ?? '')).toBeLessThan(Date.now() + MINUTE);
  });

  it('an x-ratelimit-reset in epoch milliseconds is read as such, not as the year 58385', async () => {
    const poller = newPoller('seed');
    await poller.setCheckpoint(Date.now() - MINUTE);
    const reset = Date.now() + 2 * MINUTE;
    upstream.respondOnce(
      () =>
        new Response('{"message":"quota"}', {
          status: 403,
          headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
        }),
    );

    await poller.tick();

    const status = await poller.status();
    expect(status.state).not.toBe('misconfigured');
    expect(status.rate_limited_until).toBe(new Date(reset).toISOString());
  });
});

describe('response bodies', () => {
  it.each([
    ['chunks', undefined],
    ['bytes', 'bytes' as const],
  ])(
    'a body larger than source.max_body fails the window with a clear error, and stops being read (a stream of %s)',
    async (_kind, type) => {
      const poller = newPoller('capped'); // max_body 2KB
      const start = Date.now() - MINUTE;
      await poller.setCheckpoint(start);
      let pulled = 0;
      const chunk = new TextEncoder().encode(`{"sessions":[${'{"id":"x"},'.repeat(50)}`);
      upstream.respondOnce(
        () =>
          new Response(
            new ReadableStream({
              type,
              pull(controller: ReadableStreamDefaultController<Uint8Array>) {
                pulled += chunk.byteLength;
                controller.enqueue(chunk.slice());
              },
            } as UnderlyingSource<Uint8Array>),
            { headers: { 'content-type': 'application/json' } },
          ),
      );

      await poller.tick();

      const status = await poller.status();
      expect(status.last_run?.error).toContain(
        'the body is larger than source.max_body (2048 bytes)',
      );
      expect(pulled).toBeLessThan(2048 + 4 * chunk.byteLength);
      expect(await poller.checkpoint()).toBe(start);
    },
  );

  it.each([
    // fetch() decodes gzip and keeps the Content-Length of what came over the wire.
    ['a compressed body, counted by its compressed length', { 'content-encoding': 'gzip' }],
    // A Worker behind a service binding sends whatever headers it likes.
    ['a body that declares less than it sends', {}],
  ])('%s is still held to source.max_body', async (_case, headers) => {
    const poller = newPoller('capped'); // max_body 2KB
    const start = Date.now() - MINUTE;
    await poller.setCheckpoint(start);
    const body = `{"sessions":[${'{"id":"x"},'.repeat(6_000)}{"id":"y"}]}`;
    upstream.respondOnce(
      () => new Response(body, { headers: { ...headers, 'content-length': '100' } }),
    );

    await poller.tick();

    const status = await poller.status();
    expect(status.last_run?.error).toContain(
      'the body is larger than source.max_body (2048 bytes)',
    );
    expect(await poller.checkpoint()).toBe(start);
  });

  it('bodies read one after another are each exactly themselves, whatever the one before', async () => {
    // The block a body was read into is kept for the next: a shorter body must not carry
    // the longer one's bytes, and a body that fills a block exactly must not be cut.
    const bodies = ['a'.repeat(70_000), 'short', 'é'.repeat(40_000), 'b'.repeat(65_536), '☕', ''];
    for (const body of bodies) {
      const deadline = startDeadline(5_000);
      try {
        expect(await readBody(new Response(body), 1_000_000, deadline)).toEqual({
          ok: true,
          text: body,
        });
      } finally {
        deadline.clear();
      }
    }
  });

  it('a body that declares more than max_body is refused before any of it is read', async () => {
    const poller = newPoller('capped'); // max_body 2KB
    const start = Date.now() - MINUTE;
    await poller.setCheckpoint(start);
    let pulled = 0;
    upstream.respondOnce(
      () =>
        new Response(
          new ReadableStream({
            type: 'bytes',
            pull(controller) {
              pulled += 1;
              controller.enqueue(new TextEncoder().encode('{"sessions":[]}'));
              controller.close();
            },
          }),
          { headers: { 'content-length': '5000' } },
        ),
    );

    await poller.tick();

    expect((await poller.status()).last_run?.error).toContain(
      'the body is larger than source.max_body (2048 bytes)',
    );
    expect(pulled).toBe(0);
    expect(await poller.checkpoint()).toBe(start);
  });

  it('a compressed body that declares more than max_body but decodes within it is read', async () => {
    const poller = newPoller('capped'); // max_body 2KB
    await poller.setCheckpoint(Date.now() - MINUTE);
    const at = new Date(Date.now() - 30_000).toISOString();
    const body = JSON.stringify({ sessions: [{ id: 'small', updated_at: at }] });
    upstream.respondOnce(
      () =>
        new Response(body, {
          headers: { 'content-encoding': 'gzip', 'content-length': String(10_000) },
        }),
    );

    await poller.tick();

    expect((await poller.status()).last_run?.outcome).toBe('success');
    expect(receiver.ids()).toContain('small');
  });

  it.each([
    ['a body', {}],
    ['a body that declares its length', { 'content-length': '500' }],
  ])('%s that stalls past the timeout says "timed out", not "not JSON"', async (_case, headers) => {
    const poller = newPoller('capped'); // timeout 300ms
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.respondOnce(
      () =>
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"sessions":['));
            },
          }),
          { headers },
        ),
    );

    await poller.tick();

    const error = (await poller.status()).last_run?.error ?? '';
    expect(error).toContain('the body timed out');
    expect(error).not.toContain('not JSON');
  });

  it('a page streamed in small pieces, longer than one read, arrives whole, multi-byte text and all', async () => {
    const poller = newPoller('seed');
    await poller.setCheckpoint(Date.now() - MINUTE);
    const at = new Date(Date.now() - 30_000).toISOString();
    // 300 records of about 300 bytes: past one 64 KiB read, cut every 1,000 bytes, so pieces
    // end in the middle of a character.
    const sessions = Array.from({ length: 300 }, (_, i) => ({
      id: `s${i}`,
      updated_at: at,
      note: 'café ☕ 会話 '.repeat(12),
    }));
    const bytes = new TextEncoder().encode(JSON.stringify({ sessions, next_cursor: null }));
    let offset = 0;
    upstream.respondOnce(
      () =>
        new Response(
          new ReadableStream({
            type: 'bytes',
            pull(controller) {
              if (offset >= bytes.byteLength) return controller.close();
              controller.enqueue(bytes.slice(offset, offset + 1_000));
              offset += 1_000;
            },
          }),
        ),
    );

    await poller.tick();

    expect((await poller.status()).last_run?.outcome).toBe('success');
    expect(receiver.ids().sort()).toEqual(sessions.map((session) => session.id).sort());
    const last = receiver.deliveries.find((delivery) => delivery.id === 's299');
    expect(last?.body).toContain(sessions[299]?.note);
  });
});

describe('records stamped below the window (an upstream that truncates from)', () => {
  /** The upstream answers from the start of a 60 s grain that began 40 s ago. */
  const truncating = () => {
    const grainStart = Date.now() - 40_000;
    upstream.readFrom = (from) => grainStart + Math.floor((from - grainStart) / MINUTE) * MINUTE;
    return grainStart;
  };

  it('delivers such a record once, not on every run', async () => {
    const grainStart = truncating();
    const poller = newPoller('seed');
    upstream.add('early', grainStart + 10_000);
    await poller.setCheckpoint(grainStart + 15_000);

    await poller.tick();
    await poller.tick();
    await poller.tick();

    expect(receiver.ids()).toEqual(['early']);
  });

  it('counts the attempts of such a record and dead-letters it, so C moves on', async () => {
    const grainStart = truncating();
    const poller = newPoller('poison'); // max_attempts 3
    upstream.add('early', grainStart + 10_000);
    await poller.setCheckpoint(grainStart + 15_000);
    receiver.fail('early', 500, 100);

    await poller.tick();
    await poller.retryNow();
    await poller.retryNow();

    const status = await poller.status();
    expect(status.dead_letters.count).toBe(1);
    expect(status.last_run?.outcome).toBe('success');
    expect((await poller.checkpoint()) ?? 0).toBeGreaterThan(grainStart + 15_000);
  });
});

describe('secrets in URLs', () => {
  it('shows a secret in source.url as ${NAME}, however the URL re-encoded it', async () => {
    const poller = newPoller('keyed'); // ?api_key=${QUERY_KEY}, a key with "+" and "/"
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.respondOnce(() => new Response('oops', { status: 500 }));

    await poller.tick();

    const status = await poller.status();
    expect(status.last_run?.error).toContain('api_key=${QUERY_KEY}');
    const text = JSON.stringify(status);
    for (const form of ['qk+9', 'qk%2B9', 'qk 9', 'qk%209', '9/Zr', '9%2FZr']) {
      expect(text).not.toContain(form);
    }
  });
});

describe('the subrequest budget', () => {
  it('delivers the rest of a page fetched when the budget ran out, in the version that was served', async () => {
    const poller = newPoller('budget_five'); // max_subrequests 5, 3 records a page, one POST each
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    for (let i = 0; i < 6; i += 1) upstream.add(`r${i}`, start + (i + 1) * 1000);
    const served = new Date(start + 5000).toISOString();
    // Between the first run and its continuation, r4 changes: its old version is gone.
    upstream.onRequest = () => {
      if (upstream.requests.length !== 3) return;
      upstream.updates.splice(
        upstream.updates.findIndex((u) => u.id === 'r4'),
        1,
      );
      upstream.add('r4', start + 100_000);
    };

    await poller.tick();

    const r4 = receiver.deliveries.filter((d) => d.id === 'r4').map((d) => d.version);
    expect(r4).toEqual([served, new Date(start + 100_000).toISOString()]);
    expect(receiver.ids().sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r4', 'r5']);
  });
});

describe('a paused poller', () => {
  it('releases an expired lease at its alarm without starting a recovery run', async () => {
    const poller = newPoller('seed');
    await poller.status(); // the object learns its poller's name, as on any first call
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.add('a', Date.now() - 30_000);
    await poller.sql(
      `UPDATE poller_state SET epoch = epoch + 1, lease_held = 1, lease_phase = 'running',
         lease_started_at = ?, lease_expires_at = ?, paused = 1`,
      Date.now() - 20 * MINUTE,
      Date.now() - 1,
    );
    // The lease's alarm, as the dead run left it.
    await runInDurableObject(poller.stub(), (_instance, state) =>
      state.storage.setAlarm(Date.now()),
    );

    await poller.alarm();

    expect(upstream.requests).toHaveLength(0);
    const status = await poller.status();
    expect(status.lease.held).toBe(false);
    expect(status.next_alarm_at).toBeNull();
    expect((await poller.runs())[0]).toMatchObject({ outcome: 'recovered' });
    expect((await poller.runs())[0]?.error).toContain('paused');
  });
});

describe('records stamped far in the future (an upstream clock bug)', () => {
  it('are delivered once, and the ledger forgets them within a day instead of keeping them forever', async () => {
    const poller = newPoller('seed');
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.add('future', '2999-01-01T00:00:00.000Z');

    await poller.tick();
    await poller.tick();
    await poller.tick();

    expect(receiver.ids()).toEqual(['future']);
    // The ledger: its table, and its boundary kept in the state row (migration 12).
    const rows = await poller.sql<{ version: string; version_ms: number }>(
      `SELECT version, version_ms FROM ledger
       UNION ALL SELECT json_extract(value, '$[1]'), json_extract(value, '$[2]')
       FROM poller_state, json_each(poller_state.ledger_boundary)`,
    );
    expect(rows.map((row) => row.version)).toEqual(['2999-01-01T00:00:00.000Z']);
    expect(rows[0]?.version_ms ?? 0).toBeLessThanOrEqual(Date.now() + 24 * HOUR);
  });
});
