import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import type { AuditReport } from '../../src/demo/audit.ts';
import { DEMO_CLIENT_ID } from '../../src/demo/oauth-client.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { app } from '../support/worker.ts';
import { installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
const { DEMO_CLIENT_SECRET, STATUS_TOKEN } = TEST_SECRETS;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The Worker's env with the flag on, and the demo provider's first refresh token `initial`. */
function flagged(
  initial: string,
  more: Record<string, string> = {},
): Env & { DEMO_REFRESH_TOKEN: string } {
  return { ...env, DEMO_OAUTH: '1', DEMO_REFRESH_TOKEN: initial, ...more } as Env & {
    DEMO_REFRESH_TOKEN: string;
  };
}

/** A refresh token for one test: the provider has never seen it, so it is good once. */
const freshInitial = () => `initial-${crypto.randomUUID()}`;

interface TokenBody {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  error?: string;
  error_description?: string;
}

/** POST /demo/oauth/token with the refresh_token grant, the client in Basic or in the form. */
async function refresh(
  token: string,
  on: Env,
  options: { client?: 'basic' | 'body'; secret?: string } = {},
): Promise<{ status: number; body: TokenBody; headers: Headers }> {
  const secret = options.secret ?? DEMO_CLIENT_SECRET;
  const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token });
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
  };
  if (options.client === 'body') {
    form.set('client_id', DEMO_CLIENT_ID);
    form.set('client_secret', secret);
  } else {
    headers.authorization = `Basic ${btoa(`${DEMO_CLIENT_ID}:${encodeURIComponent(secret)}`)}`;
  }
  const response = await app.request(
    '/demo/oauth/token',
    { method: 'POST', headers, body: form.toString() },
    on,
  );
  return {
    status: response.status,
    body: (await response.json()) as TokenBody,
    headers: response.headers,
  };
}

const PATHS = [
  '/demo/sessions?date_from=2026-01-01T00:00:00Z',
  '/demo/sessions/deleted?date_from=2026-01-01T00:00:00Z',
  '/demo/sessions/all',
];

const read = (path: string, on: Env, authorization?: string) =>
  app.request(path, authorization === undefined ? {} : { headers: { authorization } }, on);

describe('the demo OAuth provider (POST /demo/oauth/token)', () => {
  it('rotates the refresh token at every refresh and refuses a retired one (invalid_grant)', async () => {
    const initial = freshInitial();
    const on = flagged(initial);

    const first = await refresh(initial, on);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ token_type: 'Bearer', expires_in: 300 });
    expect(first.body.access_token).toMatch(/^demo_at_/);
    expect(first.body.refresh_token).toMatch(/^demo_rt_/);
    expect(first.headers.get('cache-control')).toBe('no-store');

    // The first refresh token is retired at once: using it again is refused for good.
    const again = await refresh(initial, on);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');

    // The rotated one works once (the client in the form this time), then it is retired too.
    const second = await refresh(first.body.refresh_token, on, { client: 'body' });
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    expect(second.body.access_token).not.toBe(first.body.access_token);
    expect((await refresh(first.body.refresh_token, on)).body.error).toBe('invalid_grant');
    expect((await refresh(second.body.refresh_token, on)).status).toBe(200);
  });

  it('gives one refresh token one refresh, even to two requests at once', async () => {
    const on = flagged(freshInitial());
    const { body } = await refresh(on.DEMO_REFRESH_TOKEN, on);
    const both = await Promise.all([
      refresh(body.refresh_token, on),
      refresh(body.refresh_token, on),
    ]);
    expect(both.map((answer) => answer.status).sort()).toEqual([200, 400]);
  });

  it('takes a new DEMO_REFRESH_TOKEN as a reconnect, and refuses tokens it never issued', async () => {
    const on = flagged(freshInitial());
    expect((await refresh(on.DEMO_REFRESH_TOKEN, on)).status).toBe(200);
    const reconnected = flagged(freshInitial());
    expect((await refresh(reconnected.DEMO_REFRESH_TOKEN, reconnected)).status).toBe(200);
    const unknown = await refresh('demo_rt_never-issued', on);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('invalid_grant');
  });

  it('authenticates its client, and says what is wrong with a request the RFC 6749 way', async () => {
    const on = flagged(freshInitial());
    const token = on.DEMO_REFRESH_TOKEN;
    const wrong = await refresh(token, on, { secret: 'not-the-secret' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Basic/);

    const post = (body: string, headers: Record<string, string>, where: Env = on) =>
      app.request('/demo/oauth/token', { method: 'POST', headers, body }, where);
    const form = 'application/x-www-form-urlencoded';
    const basic = `Basic ${btoa(`${DEMO_CLIENT_ID}:${DEMO_CLIENT_SECRET}`)}`;
    const cases: [Response, number, string][] = [
      [
        await post('grant_type=client_credentials', { 'content-type': form, authorization: basic }),
        400,
        'unsupported_grant_type',
      ],
      [
        await post('grant_type=refresh_token', { 'content-type': form, authorization: basic }),
        400,
        'invalid_request',
      ],
      [
        await post('{"grant_type":"refresh_token"}', {
          'content-type': 'application/json',
          authorization: basic,
        }),
        400,
        'invalid_request',
      ],
      // Basic and the form at once: one method only (RFC 6749 §2.3).
      [
        await post(`grant_type=refresh_token&refresh_token=x&client_secret=${DEMO_CLIENT_SECRET}`, {
          'content-type': form,
          authorization: basic,
        }),
        400,
        'invalid_request',
      ],
      [
        await post('grant_type=refresh_token&refresh_token=x', { 'content-type': form }),
        401,
        'invalid_client',
      ],
    ];
    for (const [response, status, error] of cases) {
      expect(response.status).toBe(status);
      expect(((await response.json()) as TokenBody).error).toBe(error);
    }
    // Nothing was spent by the refused requests: the first refresh token still works.
    expect((await refresh(token, on)).status).toBe(200);

    const unset = await post(
      `grant_type=refresh_token&refresh_token=x`,
      {
        'content-type': form,
        authorization: basic,
      },
      { ...on, DEMO_CLIENT_SECRET: undefined } as unknown as Env,
    );
    expect(unset.status).toBe(401);
    expect(((await unset.json()) as TokenBody).error_description).toContain('DEMO_CLIENT_SECRET');
  });
});

describe('DEMO_OAUTH: the demo upstream wants an access token', () => {
  it('refuses its sessions, deletions and listing without one, with the read token, or with an unknown one (401), and serves them with one', async () => {
    const on = flagged(freshInitial());
    const { body } = await refresh(on.DEMO_REFRESH_TOKEN, on);
    for (const path of PATHS) {
      const none = await read(path, on);
      expect(none.status, path).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="tidemark demo"');
      const status = await read(path, on, `Bearer ${STATUS_TOKEN}`);
      expect(status.status, path).toBe(401);
      expect(status.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect((await read(path, on, 'Bearer demo_at_made-up')).status, path).toBe(401);
      expect((await read(path, on, `Bearer ${body.access_token}`)).status, path).toBe(200);
    }
    // The audit is the operator's, not the upstream's: it keeps the read token.
    expect((await read('/demo/audit', on, `Bearer ${STATUS_TOKEN}`)).status).toBe(200);
  });

  it('refuses an access token once it has expired', async () => {
    const on = flagged(freshInitial(), { DEMO_ACCESS_TOKEN_TTL: '1' });
    const { body } = await refresh(on.DEMO_REFRESH_TOKEN, on);
    expect(body.expires_in).toBe(1);
    const authorization = `Bearer ${body.access_token}`;
    expect((await read(PATHS[0] ?? '', on, authorization)).status).toBe(200);
    await sleep(1_100);
    const expired = await read(PATHS[0] ?? '', on, authorization);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('is off by default: the endpoints take the read token, and an access token is no read token', async () => {
    const on = flagged(freshInitial());
    const { body } = await refresh(on.DEMO_REFRESH_TOKEN, on);
    const off = { ...env, DEMO_OAUTH: undefined } as Env;
    for (const path of PATHS) {
      expect((await read(path, off, `Bearer ${STATUS_TOKEN}`)).status, path).toBe(200);
      expect((await read(path, off, `Bearer ${body.access_token}`)).status, path).toBe(401);
    }
  });
});

describe('the demo poller on source.auth = oauth2, with DEMO_OAUTH on', () => {
  const seen: { path: string; authorization: string | null }[] = [];

  beforeEach(() => {
    seen.length = 0;
    const on = flagged(TEST_SECRETS.DEMO_REFRESH_TOKEN);
    // The demo_oauth poller reaches the demo over the network: here, the Worker with the flag on.
    installFakes({
      'demo.tidemark.internal': {
        handle: async (request) => {
          const { pathname } = new URL(request.url);
          seen.push({ path: pathname, authorization: request.headers.get('authorization') });
          return app.request(request, undefined, on);
        },
      },
    });
  });

  it('gets its tokens from the demo provider and delivers every session, nothing missing below the checkpoint', {
    timeout: 60_000,
  }, async () => {
    const demo = env.DEMO_UPSTREAM.get(env.DEMO_UPSTREAM.idFromName('demo'));
    const poller = newPoller('demo_oauth');
    const start = Date.now() - 10 * MINUTE;
    await demo.backfill(start, Date.now());
    await poller.setCheckpoint(start);

    await poller.tick();

    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('success');
    expect(status.counters.records_delivered).toBeGreaterThan(500);
    expect(status.auth).toMatchObject({ type: 'oauth2', state: 'ok', renewals_24h: 1 });
    // One token request; every request to the upstream carried the access token it gave.
    const tokenRequests = seen.filter((request) => request.path === '/demo/oauth/token');
    expect(tokenRequests).toHaveLength(1);
    const reads = seen.filter((request) => request.path.startsWith('/demo/sessions'));
    expect(new Set(reads.map((request) => request.path))).toContain('/demo/sessions/deleted');
    for (const request of reads) expect(request.authorization).toMatch(/^Bearer demo_at_/);

    // The next tick uses the same access token: it lives 5 minutes.
    await demo.backfill(Date.now() - 5_000, Date.now());
    await poller.tick();
    expect((await poller.status()).last_run?.outcome).toBe('success');
    expect(seen.filter((request) => request.path === '/demo/oauth/token')).toHaveLength(1);

    const { audit } = await import('../../src/demo/audit.ts');
    const report: AuditReport = await audit(
      {
        ...env,
        POLLER: { ...env.POLLER, idFromName: () => poller.stub().id, get: () => poller.stub() },
      } as unknown as Env,
      'demo_oauth',
    );
    expect(report.missing_below_checkpoint).toBe(0);
  });
});
