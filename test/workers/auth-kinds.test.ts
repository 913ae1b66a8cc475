import { describe, expect, it, vi } from 'vitest';
import type { PollerStatus } from '../../src/poller/status.ts';
import { pageText, pollerPage } from '../support/dashboard-page.ts';
import { api, createPoller, objectOf, setSecret } from '../support/fleet.ts';
import { rsaKeyPair, verifiedClaims } from '../support/jwt.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeHost, FakeUpstream, installFakes } from './fakes.ts';

const MINUTE = 60_000;

const status = async (name: string) =>
  (await (await api('GET', `/status/${name}`)).json()) as PollerStatus;

describe('api_key in the query (source.auth)', () => {
  /** A key whose URL forms differ from it: percent-encoded, it reads "sk%2Flive%2B4f9%3DQ". */
  const KEY = 'sk/live+4f9=Q';
  const FORMS = [KEY, encodeURIComponent(KEY)];

  /** The fake upstream, answering only requests whose `api_key` parameter is the key (401 otherwise). */
  function keyed() {
    const upstream = new FakeUpstream();
    const state = { refused: 0, echo: false };
    const host: FakeHost = {
      async handle(request) {
        const url = new URL(request.url);
        if (url.searchParams.get('api_key') !== KEY) {
          state.refused += 1;
          return Response.json({ error: 'missing or wrong api_key' }, { status: 401 });
        }
        // An upstream that echoes the request it failed, key and all (many do).
        if (state.echo)
          return new Response(`internal error serving ${request.url}`, { status: 500 });
        return upstream.handle(request);
      },
    };
    const { receiver } = installFakes({ 'upstream.test': host });
    return { upstream, receiver, state };
  }

  async function keyPoller() {
    const name = await createPoller('api-key', {
      sinceMs: 10 * MINUTE,
      source: {
        headers: {},
        params: { per_page: '2' },
        auth: { type: 'api_key', in: 'query', name: 'api_key', key: '${UPSTREAM_KEY}' },
      },
    });
    await setSecret(name, 'UPSTREAM_KEY', KEY);
    return name;
  }

  it('sends the key in the query of every page, to an upstream that refuses a request without it', async () => {
    const { upstream, receiver, state } = keyed();
    for (let i = 0; i < 5; i += 1) upstream.add(`r${i}`, Date.now() - MINUTE + i);
    const name = await keyPoller();
    const reply = await objectOf(name).runNow();

    expect(reply).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });
    expect(new Set(receiver.ids())).toEqual(new Set(['r0', 'r1', 'r2', 'r3', 'r4']));
    expect(state.refused).toBe(0);
    expect(upstream.requests.length).toBeGreaterThanOrEqual(3); // two records a page
    for (const url of upstream.requests) expect(url.searchParams.get('api_key')).toBe(KEY);
    await api('DELETE', `/pollers/${name}`);
  });

  it('never shows the key in the run error, history or status when the upstream fails echoing the URL', async () => {
    const { upstream, state } = keyed();
    upstream.add('a', Date.now() - MINUTE);
    const name = await keyPoller();
    state.echo = true;
    const logged: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...line) => {
      logged.push(line.map(String).join(' '));
    });
    const reply = await objectOf(name).runNow();
    log.mockRestore();
    expect(reply).toMatchObject({ outcome: 'ran', run: { outcome: 'failed' } });

    const shown = await status(name);
    expect(shown.last_run?.error).toContain(
      'internal error serving https://upstream.test/v1/sessions',
    );
    const history = await (await api('GET', `/pollers/${name}/runs`)).text();
    const everything = [JSON.stringify(shown), history, JSON.stringify(reply), ...logged].join(
      '\n',
    );
    expect(logged.join('\n')).toContain('internal error serving'); // the run's log line is there
    for (const form of FORMS) expect(everything).not.toContain(form);
    expect(shown.auth).toMatchObject({ type: 'api_key', state: 'ok' });
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('jwt_bearer (source.auth, RFC 7523)', () => {
  /**
   * A provider's token endpoint on login.test that takes only an RS256 assertion its public
   * key verifies, for the expected issuer, subject and audience, still in date; and an
   * upstream that takes only its live access tokens.
   */
  async function provider() {
    const keys = await rsaKeyPair();
    const live = new Set<string>();
    const state = {
      issued: 0,
      refusedAssertions: 0,
      unauthorized: 0,
      lastClaims: {} as Record<string, unknown>,
    };
    const login: FakeHost = {
      async handle(request) {
        const form = new URLSearchParams(await request.text());
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
          return Response.json({ error: 'unsupported_grant_type' }, { status: 400 });
        }
        const signed = await verifiedClaims(form.get('assertion') ?? '', keys.publicKey);
        const claims = signed?.claims ?? {};
        const now = Date.now() / 1000;
        const good =
          signed?.header.alg === 'RS256' &&
          claims.iss === 'sync@project.iam.gserviceaccount.com' &&
          claims.sub === 'ops@example.com' &&
          claims.aud === 'https://login.test/token' &&
          claims.scope === 'records.read' &&
          typeof claims.exp === 'number' &&
          claims.exp > now &&
          claims.exp - now <= 3600;
        if (!good) {
          state.refusedAssertions += 1;
          return Response.json(
            { error: 'invalid_grant', error_description: 'Invalid JWT' },
            { status: 400 },
          );
        }
        state.lastClaims = claims;
        state.issued += 1;
        const token = `ya29.access-${state.issued}-${crypto.randomUUID().slice(0, 8)}`;
        live.add(token);
        return Response.json({ access_token: token, token_type: 'Bearer', expires_in: 3600 });
      },
    };
    const upstream = new FakeUpstream();
    const guardedUpstream: FakeHost = {
      async handle(request) {
        const token = request.headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
        if (!live.has(token)) {
          state.unauthorized += 1;
          return Response.json({ error: 'invalid_token' }, { status: 401 });
        }
        return upstream.handle(request);
      },
    };
    const { receiver } = installFakes({ 'upstream.test': guardedUpstream, 'login.test': login });
    return { keys, live, state, upstream, receiver };
  }

  async function jwtPoller(pem: string) {
    const name = await createPoller('jwt-bearer', {
      sinceMs: 10 * MINUTE,
      source: {
        headers: {},
        auth: {
          type: 'jwt_bearer',
          token_url: 'https://login.test/token',
          issuer: 'sync@project.iam.gserviceaccount.com',
          subject: 'ops@example.com',
          audience: 'https://login.test/token',
          scope: 'records.read',
          private_key: '${SERVICE_ACCOUNT_KEY}',
        },
      },
    });
    await setSecret(name, 'SERVICE_ACCOUNT_KEY', pem);
    return name;
  }

  it('gets a token for a signed assertion the provider verifies, and asks once for several runs', async () => {
    const { keys, state, upstream, receiver } = await provider();
    const name = await jwtPoller(keys.pem);
    upstream.add('a', Date.now() - MINUTE);
    for (let run = 0; run < 3; run += 1) {
      const reply = await objectOf(name).runNow();
      expect(reply).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });
    }

    expect(receiver.ids()).toEqual(['a']);
    expect(upstream.requests).toHaveLength(3); // each run asked, with the one token
    expect(state.issued).toBe(1);
    expect(state.refusedAssertions).toBe(0);
    expect(state.unauthorized).toBe(0);
    expect(typeof state.lastClaims.jti).toBe('string');
    const auth = (await status(name)).auth;
    expect(auth).toMatchObject({
      type: 'jwt_bearer',
      state: 'ok',
      renewals_24h: 1,
      last_error: null,
    });
    expect(Date.parse(auth?.token_expires_at ?? '')).toBeGreaterThan(Date.now() + 50 * MINUTE);
    // The dashboard shows the token's life as for oauth2, and neither the key nor the token.
    const html = await pollerPage(name, TEST_SECRETS.STATUS_TOKEN);
    const page = pageText(html);
    expect(page).toContain(
      'jwt_bearer: an access token for an assertion signed with the private key',
    );
    expect(page).toContain('Renewals (24 h)');
    expect(html).not.toContain(keys.pem.split('\n')[1] ?? '');
    expect(html).not.toContain('ya29.access-');
    await api('DELETE', `/pollers/${name}`);
  });

  it('signs a new assertion and renews once when the upstream answers 401 to its token', async () => {
    const { keys, live, state, upstream, receiver } = await provider();
    const name = await jwtPoller(keys.pem);
    upstream.add('before', Date.now() - 2 * MINUTE);
    await objectOf(name).runNow();
    expect(receiver.ids()).toEqual(['before']);
    live.clear(); // the provider revokes every token it gave
    const reply = await objectOf(name).runNow();

    expect(reply).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });
    expect(upstream.requests).toHaveLength(2); // the refused request never reached it
    expect(state.issued).toBe(2);
    expect(state.unauthorized).toBe(1);
    await api('DELETE', `/pollers/${name}`);
  });

  it('fails as misconfigured, never showing the key, when the provider does not know the key', async () => {
    const { state } = await provider();
    const stranger = await rsaKeyPair();
    const name = await jwtPoller(stranger.pem);
    const reply = await objectOf(name).runNow();

    expect(reply).toMatchObject({ outcome: 'ran', run: { outcome: 'failed' } });
    expect(state.refusedAssertions).toBe(1);
    const shown = await status(name);
    expect(shown.state).toBe('misconfigured');
    expect(shown.last_run?.error).toContain('invalid_grant');
    expect(shown.auth).toMatchObject({ type: 'jwt_bearer', state: 'ok' });
    const body = stranger.pem.split('\n')[1] ?? '';
    expect(JSON.stringify(shown)).not.toContain(body);
    await api('DELETE', `/pollers/${name}`);
  });
});
