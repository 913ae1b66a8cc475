import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { app } from '../../src/http/app.ts';
import type { PollerStatus } from '../../src/poller/status.ts';
import { api, createPoller, objectOf, runtimeConfig, setSecret } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import {
  CRM_OAUTH,
  type FakeOAuthProvider,
  guarded,
  installGuardedUpstream,
} from './fake-oauth.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let provider: FakeOAuthProvider;
let upstream: FakeUpstream;
let receiver: FakeReceiver;
let gate: { unauthorized: number };

beforeEach(() => {
  ({ provider, upstream, receiver, gate } = installGuardedUpstream());
});

/** A runtime poller of the guarded upstream with its own client secret and refresh token. */
async function oauthPoller(
  prefix: string,
  auth: Record<string, unknown> = {},
  source: Record<string, unknown> = {},
) {
  const name = await createPoller(prefix, {
    sinceMs: 10 * MINUTE,
    source: { headers: {}, auth: { ...CRM_OAUTH, ...auth }, ...source },
  });
  await setSecret(name, 'CRM_CLIENT_SECRET', provider.clientSecret);
  await setSecret(name, 'CRM_REFRESH_TOKEN', provider.firstRefreshToken);
  return name;
}

const status = async (name: string) =>
  (await (await api('GET', `/status/${name}`)).json()) as PollerStatus;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('OAuth 2.0 with rotating refresh tokens (source.auth, R17)', () => {
  it('keeps polling across access tokens that live 3 s, renewing before they expire, never presenting a retired refresh token', async () => {
    const name = await oauthPoller('oauth-ticks');
    const started = Date.now();
    let made = 0;
    while (Date.now() - started < 9_000) {
      upstream.add(`r${made}`, Date.now());
      made += 1;
      const reply = await objectOf(name).runNow();
      expect(reply).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });
      await sleep(300);
    }

    expect(new Set(receiver.ids())).toEqual(
      new Set(Array.from({ length: made }, (_, i) => `r${i}`)),
    );
    expect(provider.retiredPresented).toEqual([]);
    expect(gate.unauthorized).toBe(0); // never an expired access token either
    expect(provider.renewals).toBeGreaterThanOrEqual(3);
    const auth = (await status(name)).auth;
    expect(auth).toMatchObject({ type: 'oauth2', state: 'ok', last_error: null });
    expect(auth?.renewals_24h).toBe(provider.renewals);
    await api('DELETE', `/pollers/${name}`);
  }, 20_000);

  it('comes back with a working token after the object dies between the provider issuing a new refresh token and its use', async () => {
    const name = await oauthPoller('oauth-crash');
    upstream.add('a', Date.now() - MINUTE);
    const poller = newPoller(name, name);
    const page = upstream.holdNext(); // the first page, sent with the token just issued

    await objectOf(name).trigger('manual'); // its run starts by the alarm
    await page.arrived();
    expect(provider.renewals).toBe(1); // the provider rotated: the first refresh token is retired
    await poller.abort();
    page.release();
    provider.accessMs = 3_000;
    await sleep(3_100); // the access token too has expired: only the rotated refresh token helps
    await poller.expireLease();
    await poller.alarm();
    await poller.settle();

    expect(receiver.ids()).toContain('a');
    expect(provider.retiredPresented).toEqual([]);
    expect(provider.renewals).toBe(2);
    expect((await status(name)).auth?.state).toBe('ok');
    await api('DELETE', `/pollers/${name}`);
  }, 15_000);

  it('says "reconnect needed" when the provider refuses the refresh token, does not retry it hot, and a new secret recovers it', async () => {
    const name = await oauthPoller('oauth-revoked');
    upstream.add('before', Date.now() - 2 * MINUTE);
    await objectOf(name).runNow();
    provider.revokeAll();
    provider.expireAll(); // the 401 asks for a renewal, which the provider refuses

    const failed = await objectOf(name).runNow();
    expect(failed).toMatchObject({ outcome: 'ran', run: { outcome: 'failed' } });
    const broken = await status(name);
    expect(broken.auth?.state).toBe('reconnect_needed');
    expect(broken.state).toBe('misconfigured');
    expect(broken.alerts.join(' ')).toContain('reconnect needed');
    expect(broken.last_run?.error).toContain(`PUT /pollers/${name}/secrets/CRM_REFRESH_TOKEN`);
    // A slow retry, not a hot loop: the next attempt is half an hour away.
    expect(Date.parse(broken.next_wakeup?.at ?? '')).toBeGreaterThan(Date.now() + 20 * MINUTE);
    const asked = provider.renewals;
    await objectOf(name).runNow(); // a manual run: still refused, without asking the provider
    expect(provider.renewals).toBe(asked);

    provider.valid.add('refresh-reconnected');
    await setSecret(name, 'CRM_REFRESH_TOKEN', 'refresh-reconnected');
    upstream.add('after', Date.now());
    const recovered = await objectOf(name).runNow();

    expect(recovered).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });
    expect(receiver.ids()).toContain('after');
    expect((await status(name)).auth).toMatchObject({ state: 'ok', last_error: null });
    await api('DELETE', `/pollers/${name}`);
  });

  it('never renews twice for triggers that come together', async () => {
    // Pages of one record: the next page is asked for while a delivery is in flight.
    const name = await oauthPoller('oauth-together', {}, { params: { per_page: '1' } });
    upstream.add('x', Date.now() - MINUTE);
    upstream.add('y', Date.now() - MINUTE);

    await Promise.all([
      objectOf(name).runNow(),
      objectOf(name).runNow(),
      objectOf(name).trigger('manual'),
      api('POST', `/pollers/${name}/nudge`),
    ]);
    await newPoller(name, name).settle();

    expect(provider.renewals).toBe(1);
    expect(new Set(receiver.ids())).toEqual(new Set(['x', 'y']));
    await api('DELETE', `/pollers/${name}`);
  });

  it('renews once on a 401 and retries that page; a second 401 fails the run', async () => {
    const name = await oauthPoller('oauth-401');
    upstream.add('a', Date.now() - 2 * MINUTE);
    await objectOf(name).runNow();
    // The provider drops its access tokens early (a password change, say).
    provider.accessMs = 60_000;
    const first = provider.renewals;
    upstream.add('b', Date.now());
    upstream.respondOnce(() => Response.json({ error: 'invalid_token' }, { status: 401 }));

    const retried = await objectOf(name).runNow();
    expect(retried).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });
    expect(provider.renewals).toBe(first + 1);
    expect(receiver.ids()).toContain('b');

    upstream.respondOnce(() => Response.json({ error: 'invalid_token' }, { status: 401 }));
    upstream.respondOnce(() => Response.json({ error: 'invalid_token' }, { status: 401 }));
    const failed = await objectOf(name).runNow();
    expect(failed).toMatchObject({ outcome: 'ran', run: { outcome: 'failed' } });
    expect((await status(name)).last_run?.error).toContain('HTTP 401');
    expect(provider.renewals).toBe(first + 2);
    await api('DELETE', `/pollers/${name}`);
  });

  it('follows the rate-limit rules for a token endpoint that answers 429, and backs off on a 503', async () => {
    const name = await oauthPoller('oauth-429');
    provider.respondOnce(() =>
      Response.json({ error: 'slow_down' }, { status: 429, headers: { 'retry-after': '120' } }),
    );
    const limited = await objectOf(name).runNow();
    expect(limited).toMatchObject({ outcome: 'ran', run: { outcome: 'failed' } });
    const after = await status(name);
    expect(Date.parse(after.rate_limited_until ?? '')).toBeGreaterThan(Date.now() + 100_000);
    expect(after.auth?.last_error?.message).toContain('HTTP 429');

    provider.respondOnce(() => new Response('down', { status: 503 }));
    await newPoller(name, name).sql(
      'UPDATE poller_state SET rate_limited_until = NULL, wakeup_at = NULL',
    );
    const down = await objectOf(name).runNow();
    expect(down).toMatchObject({ outcome: 'ran', run: { outcome: 'failed' } });
    expect((await status(name)).next_wakeup?.reason).toBe('retry');
    expect((await status(name)).state).toBe('failing');
    await api('DELETE', `/pollers/${name}`);
  });

  it('never shows a token or the client secret: status, history and errors have them redacted', async () => {
    const name = await oauthPoller('oauth-quiet');
    upstream.add('a', Date.now() - MINUTE);
    await objectOf(name).runNow();
    provider.respondOnce(() =>
      Response.json(
        {
          error: 'invalid_request',
          refresh_token: provider.firstRefreshToken,
          echo: provider.clientSecret,
        },
        { status: 400 },
      ),
    );
    provider.expireAll(); // the next page's 401 asks for a renewal, answered with an error
    const failed = await objectOf(name).runNow();
    expect(failed).toMatchObject({ outcome: 'ran', run: { outcome: 'failed' } });

    const shown = JSON.stringify([
      await status(name),
      await (await api('GET', `/pollers/${name}/runs`)).json(),
      failed,
    ]);
    expect(shown).toContain('[redacted]');
    for (const secret of [provider.clientSecret, provider.firstRefreshToken, ...provider.retired]) {
      expect(shown).not.toContain(secret);
    }
    expect(shown).not.toMatch(/access-\d+-/);
    expect(shown).not.toMatch(/refresh-\d+-/);
    // And at rest: the tokens are sealed.
    const rows = await newPoller(name, name).sql<{ sealed: string }>(
      'SELECT sealed FROM oauth_tokens',
    );
    expect(rows[0]?.sealed).not.toMatch(/access-|refresh-/);
    await api('DELETE', `/pollers/${name}`);
  });

  it('never sends the access token to another origin: a redirect there is refused, not followed', async () => {
    const name = await oauthPoller('oauth-redirect');
    const elsewhere: (string | null)[] = [];
    installFakes({
      'upstream.test': guarded(provider, {
        handle: async () =>
          new Response(null, { status: 302, headers: { location: 'https://collector.test/v1' } }),
      }).host,
      'login.test': provider,
      'collector.test': {
        handle: async (request) => {
          elsewhere.push(request.headers.get('authorization'));
          return Response.json([]);
        },
      },
    });

    const reply = await objectOf(name).runNow();

    expect(reply).toMatchObject({ outcome: 'ran', run: { outcome: 'failed' } });
    expect(elsewhere).toEqual([]);
    expect((await status(name)).last_run?.error).toContain('another origin than source.url');
    await api('DELETE', `/pollers/${name}`);
  });

  it('asks as the client with grant = "client_credentials", its secret in the body with client_auth = "body"', async () => {
    const seen: string[] = [];
    const answer = provider.handle.bind(provider);
    provider.handle = async (request) => {
      seen.push(
        `${request.headers.get('authorization') ?? 'none'} ${await request.clone().text()}`,
      );
      return answer(request);
    };
    const name = await createPoller('oauth-client', {
      sinceMs: 10 * MINUTE,
      source: {
        headers: {},
        auth: {
          type: 'oauth2',
          grant: 'client_credentials',
          token_url: 'https://login.test/token',
          client_id: 'crm-client',
          client_secret: '${CRM_CLIENT_SECRET}',
          client_auth: 'body',
          scope: 'read',
        },
      },
    });
    await setSecret(name, 'CRM_CLIENT_SECRET', provider.clientSecret);
    upstream.add('a', Date.now() - MINUTE);

    await objectOf(name).runNow();

    expect(receiver.ids()).toEqual(['a']);
    expect(seen).toEqual([
      `none grant_type=client_credentials&scope=read&client_id=crm-client&client_secret=${provider.clientSecret}`,
    ]);
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('simple source authentication (source.auth = bearer, basic)', () => {
  it.each([
    [{ type: 'bearer', token: '${UPSTREAM_TOKEN}' }, `Bearer ${TEST_SECRETS.UPSTREAM_TOKEN}`],
    [
      { type: 'basic', username: 'api', password: '${UPSTREAM_TOKEN}' },
      `Basic ${btoa(`api:${TEST_SECRETS.UPSTREAM_TOKEN}`)}`,
    ],
  ])('sends %o as the Authorization header', async (auth, header) => {
    const headers: (string | null)[] = [];
    installFakes({
      'upstream.test': {
        handle: async (request) => {
          headers.push(request.headers.get('authorization'));
          return Response.json({ sessions: [], next_cursor: null });
        },
      },
    });
    const name = await createPoller('auth-simple', {
      sinceMs: MINUTE,
      source: { headers: {}, auth },
    });
    await objectOf(name).runNow();
    expect(headers).toEqual([header]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('refuses source.auth next to an Authorization header, and a token_url FLEET_POLICY does not allow', async () => {
    const both = await api('PUT', '/pollers/auth-both', {
      ...runtimeConfig(),
      source: { ...runtimeConfig().source, auth: { type: 'bearer', token: '${UPSTREAM_TOKEN}' } },
    });
    expect(both.status).toBe(400);
    expect(await both.text()).toContain(
      'source.headers: has an Authorization header and source.auth sets one too',
    );

    const config = {
      ...runtimeConfig(),
      source: {
        ...runtimeConfig().source,
        headers: {},
        auth: { ...CRM_OAUTH, token_url: 'https://login.internal/token' },
      },
    };
    const refused = await app.request(
      '/pollers/auth-private-token-url',
      {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${TEST_SECRETS.ADMIN_TOKEN}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(config),
      },
      env,
    );
    expect(refused.status).toBe(400);
    const { errors } = (await refused.json()) as { errors: string[] };
    expect(errors.join(' ')).toContain(
      'source.auth.token_url: the host "login.internal" is not a public host',
    );
  });
});
