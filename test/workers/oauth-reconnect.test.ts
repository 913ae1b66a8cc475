import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { STATIC_INCARNATION } from '../../src/catalog.ts';
import { Poller } from '../../src/poller/durable-object.ts';
import type { RunNowReply } from '../../src/poller/rpc.ts';
import { type FakeOAuthProvider, installGuardedUpstream } from './fake-oauth.ts';
import type { FakeReceiver, FakeUpstream } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let provider: FakeOAuthProvider;
let upstream: FakeUpstream;
let receiver: FakeReceiver;
let gate: { unauthorized: number };

beforeEach(() => {
  ({ provider, upstream, receiver, gate } = installGuardedUpstream());
});

type TestPoller = ReturnType<typeof newPoller>;

/** The static crm_oauth poller (test/support/pollers.ts) in an object of its own. */
async function staticOAuthPoller() {
  const poller = newPoller('crm_oauth');
  await poller.setCheckpoint(Date.now() - 10 * MINUTE);
  return poller;
}

/**
 * The object as a deploy with these Worker secrets runs it: a new instance, built with that
 * env (a new version of the Worker starts new instances of its objects).
 */
async function deployed(poller: TestPoller, secrets: Record<string, string>) {
  await poller.abort();
  const worker = { ...env, ...secrets } as Env;
  let instance: Poller | null = null;
  return <T>(call: (object: Poller) => Promise<T>) =>
    runInDurableObject(poller.stub(), (_old: Poller, state) => {
      instance ??= new Poller(state, worker);
      return call(instance);
    });
}

/** A run that worked, then the provider refuses every refresh token and the access token dies. */
async function refusedByTheProvider(run: () => Promise<RunNowReply>): Promise<string> {
  upstream.add('before', Date.now() - 2 * MINUTE);
  expect(await run()).toMatchObject({ run: { outcome: 'success' } });
  provider.revokeAll();
  provider.expireAll();
  const failed = await run();
  expect(failed).toMatchObject({ run: { outcome: 'failed' } });
  return failed.outcome === 'ran' ? (failed.run.error ?? '') : '';
}

describe('reconnecting a static OAuth 2.0 poller after "reconnect needed"', () => {
  it('takes a new refresh token PUT as its own secret at once, at the next manual run', async () => {
    const poller = await staticOAuthPoller();
    await poller.stub().putSecret(STATIC_INCARNATION, 'CRM_CLIENT_SECRET', provider.clientSecret);
    await poller
      .stub()
      .putSecret(STATIC_INCARNATION, 'CRM_REFRESH_TOKEN', provider.firstRefreshToken);
    const error = await refusedByTheProvider(() => poller.stub().runNow());
    expect(error).toContain('reconnect needed');
    expect(error).toContain('PUT /pollers/crm_oauth/secrets/CRM_REFRESH_TOKEN');
    const asked = provider.renewals;
    const refused = gate.unauthorized;

    provider.valid.add('refresh-reconnected');
    await poller.stub().putSecret(STATIC_INCARNATION, 'CRM_REFRESH_TOKEN', 'refresh-reconnected');
    upstream.add('after', Date.now());
    const recovered = await poller.stub().runNow();

    expect(recovered).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });
    // Renewed with the new token before the first request: the old access token is not tried.
    expect(provider.renewals).toBe(asked + 1);
    expect(provider.presented.at(-1)).toBe('refresh-reconnected');
    expect(gate.unauthorized).toBe(refused);
    expect(receiver.ids()).toContain('after');
    expect((await poller.status()).auth).toMatchObject({ state: 'ok', last_error: null });
  });

  it('names the Worker secret when the refresh token is one, refuses a PUT it would shadow, and takes the new Worker secret at the next run', async () => {
    const poller = await staticOAuthPoller();
    const first = await deployed(poller, {
      CRM_CLIENT_SECRET: provider.clientSecret,
      CRM_REFRESH_TOKEN: provider.firstRefreshToken,
    });
    const error = await refusedByTheProvider(() => first((object) => object.runNow()));
    expect(error).toContain('reconnect needed');
    expect(error).toContain('the Worker secret CRM_REFRESH_TOKEN');
    expect(error).not.toContain('PUT /pollers');

    // The PUT the poller would never read is refused, not answered 201.
    provider.valid.add('refresh-put');
    const put = await first((object) =>
      object.putSecret(STATIC_INCARNATION, 'CRM_REFRESH_TOKEN', 'refresh-put'),
    );
    expect(put).toMatchObject({ outcome: 'refused', status: 409 });
    expect(put.outcome === 'refused' ? put.error : '').toContain('npx wrangler secret put');
    expect(provider.presented).not.toContain('refresh-put');

    // wrangler secret put: a new version of the Worker, with the new token.
    provider.valid.add('refresh-redeployed');
    const next = await deployed(poller, {
      CRM_CLIENT_SECRET: provider.clientSecret,
      CRM_REFRESH_TOKEN: 'refresh-redeployed',
    });
    upstream.add('after', Date.now());
    const recovered = await next((object) => object.runNow());

    expect(recovered).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });
    expect(provider.presented.at(-1)).toBe('refresh-redeployed');
    expect(receiver.ids()).toContain('after');
    expect(await next(async (object) => (await object.status()).auth)).toMatchObject({
      state: 'ok',
      last_error: null,
    });
  });
});
