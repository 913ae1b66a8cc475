import { beforeEach, describe, expect, it, vi } from 'vitest';
import { api, createPoller, objectOf, setSecret } from '../support/fleet.ts';
import { CRM_OAUTH, FakeOAuthProvider, guarded } from './fake-oauth.ts';
import { FakeSaas } from './fake-saas.ts';
import { type FakeHost, type FakeReceiver, FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let provider: FakeOAuthProvider;
let receiver: FakeReceiver;

/** A runtime poller on OAuth 2.0 with its client secret and refresh token set. */
async function oauthPoller(prefix: string, options: Record<string, unknown> = {}) {
  const { source = {}, ...rest } = options as { source?: Record<string, unknown> };
  const name = await createPoller(prefix, {
    sinceMs: 10 * MINUTE,
    source: { headers: {}, auth: CRM_OAUTH, ...source },
    ...rest,
  });
  await setSecret(name, 'CRM_CLIENT_SECRET', provider.clientSecret);
  await setSecret(name, 'CRM_REFRESH_TOKEN', provider.firstRefreshToken);
  return name;
}

/** `host`, except that it answers 401 (an access token revoked early) when `refuse` says so. */
function refusing(host: FakeHost, refuse: (url: URL) => boolean): FakeHost {
  return {
    handle: async (request) =>
      refuse(new URL(request.url))
        ? Response.json({ error: 'invalid_token' }, { status: 401 })
        : host.handle(request),
  };
}

beforeEach(() => {
  provider = new FakeOAuthProvider();
  provider.accessMs = 10 * MINUTE; // renewals here come from 401s only
});

describe('OAuth 2.0 renewals (R17)', () => {
  it('renews once on a 401 to a reconcile.fetch and asks for the record again, as the stream does', async () => {
    const saas = new FakeSaas();
    let revoked = false;
    const refused: string[] = [];
    const upstream = refusing(guarded(provider, saas).host, (url) => {
      if (!revoked || !url.pathname.startsWith('/v1/sessions/')) return false;
      revoked = false;
      refused.push(url.pathname);
      return true;
    });
    ({ receiver } = installFakes({ 'upstream.test': upstream, 'login.test': provider }));
    const name = await oauthPoller('oauth-fetch', {
      reconcile: {
        every: '1d',
        url: 'https://upstream.test/v1/all',
        items: 'sessions',
        fetch: 'https://upstream.test/v1/sessions/{id}',
      },
    });
    await objectOf(name).runNow();
    await newPoller(name, name).settle();
    saas.put('missed', Date.now() - 60 * MINUTE, { full: true });
    const renewals = provider.renewals;
    revoked = true;

    expect((await api('POST', `/pollers/${name}/reconcile`)).status).toBe(202);
    await newPoller(name, name).settle();

    expect(refused).toEqual(['/v1/sessions/missed']);
    expect(saas.asked('/v1/sessions/missed')).toHaveLength(1); // asked again, with the new token
    expect(receiver.ids()).toContain('missed');
    expect(provider.renewals).toBe(renewals + 1);
    await api('DELETE', `/pollers/${name}`);
  });

  it('never runs a renewal a look-ahead page left going beside one of the next run, after the wiring was built again', async () => {
    const upstream = new FakeUpstream();
    let refuseNext: ((url: URL) => boolean) | null = null;
    const host = refusing(guarded(provider, upstream).host, (url) => {
      if (refuseNext === null || !refuseNext(url)) return false;
      refuseNext = null;
      return true;
    });
    ({ receiver } = installFakes({ 'upstream.test': host, 'login.test': provider }));
    // Pages of one record: the next page is asked for while this one is delivered.
    const name = await oauthPoller('oauth-ahead', { source: { params: { per_page: '1' } } });
    upstream.add('x', Date.now() - 2 * MINUTE);
    upstream.add('y', Date.now() - MINUTE);

    // Run 1: its first page gets the first token; page 2, asked for ahead, is answered 401,
    // and its renewal is held at the token endpoint; page 1's delivery fails the window
    // meanwhile, and the run ends.
    let rotated = '';
    provider.onIssued = ({ refresh }) => {
      rotated ||= refresh;
    };
    refuseNext = (url) => url.searchParams.get('cursor') === '1';
    const renewal = provider.holdNth(2);
    const delivery = receiver.holdNth(1);
    receiver.fail('x', 401);
    const first = objectOf(name).runNow();
    await renewal.arrived();
    delivery.release();
    expect(await first).toMatchObject({ run: { outcome: 'failed' } });

    // A secret changes: the next run has a new wiring. Its first page is answered 401 too.
    await setSecret(name, 'UNRELATED', 'changes-the-wiring');
    let refusedAgain = false;
    refuseNext = () => {
      refusedAgain = true;
      return true;
    };
    const second = objectOf(name).runNow();
    await vi.waitUntil(() => refusedAgain, { timeout: 2_000, interval: 1 });
    renewal.release();
    expect(await second).toMatchObject({ run: { outcome: 'success' } });

    // One renewal spent the rotated token; the second run took the token it brought.
    expect(provider.presented.filter((token) => token === rotated)).toHaveLength(1);
    expect(provider.retiredPresented).toEqual([]);
    expect(new Set(receiver.ids())).toEqual(new Set(['x', 'y']));
    expect((await (await api('GET', `/status/${name}`)).json()) as object).toMatchObject({
      auth: { state: 'ok' },
    });
    await api('DELETE', `/pollers/${name}`);
  });
});
