import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import {
  decryptSecret,
  encryptSecret,
  type SealedSecret,
  secretKeysFrom,
} from '../../src/secrets/index.ts';
import { api, createPoller, objectOf, runtimeConfig, setSecret } from '../support/fleet.ts';
import { CRM_OAUTH, FakeOAuthProvider } from './fake-oauth.ts';
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

/** A runtime poller on OAuth that has run once: the vault holds an access and a rotated refresh token. */
async function pollerThatRan() {
  const name = await createPoller('oauth-bound', {
    sinceMs: 10 * MINUTE,
    source: { headers: {}, auth: CRM_OAUTH },
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
      auth: { ...CRM_OAUTH, ...change.auth },
    },
    keep_secrets: true,
  });
  expect(reply.status).toBe(200);
}

/** The moved source (elsewhere.test) was asked, and never with a token obtained for the old origin. */
function expectNoneOfThemAtElsewhere(obtained: (string | null)[]) {
  const there = seen.filter((request) => request.host === 'elsewhere.test');
  expect(there.length).toBeGreaterThan(0);
  for (const request of there) expect(obtained).not.toContain(request.authorization);
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
    expectNoneOfThemAtElsewhere(obtained);
    await api('DELETE', `/pollers/${name}`);
  });

  it('never sends the rotated refresh token to the token endpoint a replace moves token_url to', async () => {
    const { name, obtained } = await pollerThatRan();
    const rotated = [...provider.valid];
    provider.expireAll(); // the next request needs a renewal: at the new endpoint
    seen = [];

    await replace(name, { auth: { token_url: 'https://login2.test/token' } });
    // The client's own secrets go only where they were set for (R18): set again for login2.
    await setSecret(name, 'CRM_CLIENT_SECRET', other.clientSecret);
    await setSecret(name, 'CRM_REFRESH_TOKEN', other.firstRefreshToken);
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

describe('OAuth 2.0 tokens sealed before tokens were bound to a config', () => {
  /** Rewrites the vault's row as it was before bindings: no binding in the seal, and `refresh_for` the configured token's fingerprint (or `lineage`). */
  async function sealedAsBefore(name: string, lineage: string) {
    const keys = secretKeysFrom(env);
    if (!keys.ok) throw keys.error;
    await runInDurableObject(objectOf(name), async (_instance: Poller, state) => {
      const [row] = state.storage.sql
        .exec<{ sealed: string }>('SELECT sealed FROM oauth_tokens WHERE id = 1')
        .toArray();
      if (row === undefined) throw new Error('no tokens were sealed');
      const text = await decryptSecret(
        keys.keys,
        name,
        'oauth_tokens',
        JSON.parse(row.sealed) as SealedSecret,
      );
      const { access, refresh } = JSON.parse(text) as { access: string; refresh: string };
      const before = await encryptSecret(
        keys.keys,
        name,
        'oauth_tokens',
        JSON.stringify({ access, refresh }),
      );
      state.storage.sql.exec(
        'UPDATE oauth_tokens SET sealed = ?, refresh_for = ? WHERE id = 1',
        JSON.stringify(before),
        lineage,
      );
    });
    // A new instance, as after the deploy that brings bindings: nothing cached in memory.
    await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
      state.abort('test: a deploy'),
    ).catch((error: unknown) => error);
  }

  /** The fingerprint the vault kept of the configured refresh token before bindings. */
  async function fingerprintOf(token: string): Promise<string> {
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token));
    return [...new Uint8Array(digest).slice(0, 12)]
      .map((byte) => byte.toString(16).padStart(2, '0'))
      .join('');
  }

  it('keeps using them when they descend from the configured refresh token: no reconnect at the upgrade', async () => {
    const { name, obtained } = await pollerThatRan();
    await sealedAsBefore(name, await fingerprintOf(provider.firstRefreshToken));
    const renewals = provider.renewals;
    seen = [];

    upstream.add('b', Date.now());
    const reply = await objectOf(name).runNow();

    // The access token they hold is used as it is; the configured refresh token, which the
    // provider retired when it rotated, is never presented again.
    expect(reply).toMatchObject({ run: { outcome: 'success' } });
    expect(provider.renewals).toBe(renewals);
    expect(obtained).toContain(seen[0]?.authorization);
    expect(provider.retiredPresented).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('are taken for the config of the first wiring only: a replace that moves source.url after it does not get them', async () => {
    const { name, obtained } = await pollerThatRan();
    await sealedAsBefore(name, await fingerprintOf(provider.firstRefreshToken));
    provider.valid.add(provider.firstRefreshToken);
    upstream.add('b', Date.now());
    expect(await objectOf(name).runNow()).toMatchObject({ run: { outcome: 'success' } });
    seen = [];

    await replace(name, { url: 'https://elsewhere.test/v1/sessions' });
    upstream.add('c', Date.now());
    const reply = await objectOf(name).runNow();

    expect(reply).toMatchObject({ run: { outcome: 'success' } });
    expectNoneOfThemAtElsewhere(obtained);
    await api('DELETE', `/pollers/${name}`);
  });

  it('counts them as none when they descend from another refresh token', async () => {
    const { name } = await pollerThatRan();
    await sealedAsBefore(name, await fingerprintOf('refresh-of-another-config'));
    provider.valid.add(provider.firstRefreshToken);
    provider.expireAll();

    upstream.add('b', Date.now());
    const reply = await objectOf(name).runNow();

    expect(reply).toMatchObject({ run: { outcome: 'success' } });
    expect(provider.presented.at(-1)).toBe(provider.firstRefreshToken);
    await api('DELETE', `/pollers/${name}`);
  });
});
