import { beforeEach, describe, expect, it } from 'vitest';
import { api, createPoller, objectOf, runtimeConfig, setSecret } from '../support/fleet.ts';
import { FakeOAuthProvider } from './fake-oauth.ts';
import { type FakeHost, FakeUpstream, installFakes } from './fakes.ts';

const MINUTE = 60_000;
let provider: FakeOAuthProvider;
let other: FakeOAuthProvider;
let upstream: FakeUpstream;
/** Each request to an upstream origin: its host and the Authorization header it carried. */
let seen: { host: string; authorization: string | null }[];

/** An upstream that takes the live access tokens of either provider (401 otherwise). */
function guardedByBoth(host: string): FakeHost {
  return {
    async handle(request) {
      const authorization = request.headers.get('authorization');
      seen.push({ host, authorization });
      if (!provider.accepts(authorization) && !other.accepts(authorization)) {
        return Response.json({ error: 'invalid_token' }, { status: 401 });
      }
      return upstream.handle(request);
    },
  };
}

beforeEach(() => {
  provider = new FakeOAuthProvider();
  provider.accessMs = 10 * MINUTE; // alive through the test: only a binding keeps it unused
  other = new FakeOAuthProvider();
  upstream = new FakeUpstream();
  seen = [];
  installFakes({
    'upstream.test': guardedByBoth('upstream.test'),
    'elsewhere.test': guardedByBoth('elsewhere.test'),
    'login.test': provider,
    'login2.test': other,
  });
});

const OAUTH = {
  type: 'oauth2',
  token_url: 'https://login.test/token',
  client_id: 'crm-client',
  client_secret: '${CRM_CLIENT_SECRET}',
  refresh_token: '${CRM_REFRESH_TOKEN}',
};

/** A runtime poller on OAuth that has run once: the vault holds an access and a rotated refresh token. */
async function pollerThatRan() {
  const name = await createPoller('oauth-bound', {
    sinceMs: 10 * MINUTE,
    source: { headers: {}, auth: OAUTH },
  });
  await setSecret(name, 'CRM_CLIENT_SECRET', provider.clientSecret);
  await setSecret(name, 'CRM_REFRESH_TOKEN', provider.firstRefreshToken);
  upstream.add('a', Date.now() - MINUTE);
  expect(await objectOf(name).runNow()).toMatchObject({ run: { outcome: 'success' } });
  const obtained = seen.map((request) => request.authorization);
  expect(obtained.length).toBeGreaterThan(0);
  return { name, obtained };
}

/** Replaces the poller's config, its source changed by `change`; keeps its secrets. */
async function replace(
  name: string,
  change: { url?: string; auth?: Record<string, unknown> },
): Promise<void> {
  const base = runtimeConfig();
  const reply = await api('PUT', `/pollers/${name}`, {
    ...base,
    start_from: new Date(Date.now() - 10 * MINUTE).toISOString(),
    source: {
      ...base.source,
      headers: {},
      ...(change.url === undefined ? {} : { url: change.url }),
      auth: { ...OAUTH, ...change.auth },
    },
    keep_secrets: true,
  });
  expect(reply.status).toBe(200);
}

describe('OAuth 2.0 tokens are bound to the config they were obtained under (R18)', () => {
  it('never sends the access token obtained for one origin to the origin a replace moves source.url to', async () => {
    const { name, obtained } = await pollerThatRan();
    // A provider whose refresh tokens do not rotate: the configured one still works.
    provider.valid.add(provider.firstRefreshToken);
    seen = [];

    await replace(name, { url: 'https://elsewhere.test/v1/sessions' });
    upstream.add('b', Date.now());
    const reply = await objectOf(name).runNow();

    expect(reply).toMatchObject({ run: { outcome: 'success' } });
    const there = seen.filter((request) => request.host === 'elsewhere.test');
    expect(there.length).toBeGreaterThan(0);
    for (const request of there) expect(obtained).not.toContain(request.authorization);
    await api('DELETE', `/pollers/${name}`);
  });

  it('never sends the rotated refresh token to the token endpoint a replace moves token_url to', async () => {
    const { name, obtained } = await pollerThatRan();
    const rotated = [...provider.valid];
    provider.expireAll(); // the next request needs a renewal: at the new endpoint
    seen = [];

    await replace(name, { auth: { token_url: 'https://login2.test/token' } });
    upstream.add('b', Date.now());
    const reply = await objectOf(name).runNow();

    // The new endpoint got the refresh token the config names, none the old provider issued.
    for (const token of rotated) expect(other.presented).not.toContain(token);
    expect(other.presented).toEqual([provider.firstRefreshToken]);
    expect(reply).toMatchObject({ run: { outcome: 'success' } });
    for (const request of seen) expect(obtained).not.toContain(request.authorization);
    await api('DELETE', `/pollers/${name}`);
  });

  it('does not use the tokens obtained for another client_id', async () => {
    const { name, obtained } = await pollerThatRan();
    provider.clientId = 'crm-client-2';
    provider.valid.add(provider.firstRefreshToken);
    const renewals = provider.renewals;
    seen = [];

    await replace(name, { auth: { client_id: 'crm-client-2' } });
    upstream.add('b', Date.now());
    const reply = await objectOf(name).runNow();

    expect(reply).toMatchObject({ run: { outcome: 'success' } });
    expect(provider.renewals).toBe(renewals + 1);
    for (const request of seen) expect(obtained).not.toContain(request.authorization);
    await api('DELETE', `/pollers/${name}`);
  });

  it('renews with a new refresh token at once, before using the access token the old one brought', async () => {
    const { name, obtained } = await pollerThatRan();
    provider.valid.add('refresh-given-again');
    seen = [];

    await setSecret(name, 'CRM_REFRESH_TOKEN', 'refresh-given-again');
    upstream.add('b', Date.now());
    const reply = await objectOf(name).runNow();

    expect(reply).toMatchObject({ run: { outcome: 'success' } });
    expect(provider.presented.at(-1)).toBe('refresh-given-again');
    for (const request of seen) expect(obtained).not.toContain(request.authorization);
    await api('DELETE', `/pollers/${name}`);
  });
});
