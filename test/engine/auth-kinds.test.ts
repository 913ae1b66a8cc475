import { describe, expect, it } from 'vitest';
import { credentialsIn } from '../../src/config/credential-forms.ts';
import { DEFAULT_FLEET_POLICY } from '../../src/config/fleet-policy.ts';
import { reachProblems } from '../../src/config/fleet-reach.ts';
import { loadPoller } from '../../src/config/load.ts';
import { originsOf, requestsOf } from '../../src/config/secret-destinations.ts';
import type { PageResult } from '../../src/engine/ports.ts';
import type { Window } from '../../src/engine/window.ts';
import {
  type AuthConfig,
  type AuthType,
  authKindOf,
  authKinds,
  authorizerOf,
} from '../../src/sources/auth/index.ts';
import { tokenEndpointOf } from '../../src/sources/auth/token-endpoint.ts';
import { fetchRecordById } from '../../src/sources/fetch-record.ts';
import { HttpSource } from '../../src/sources/http-source.ts';
import {
  type AuthFake,
  type AuthWorld,
  authFakes,
  MemoryVault,
  UPSTREAM,
} from '../support/auth-kinds.ts';

/**
 * One case suite, run against every kind of source.auth in src/sources/auth (as the paging
 * styles' suite runs every style): the real HttpSource and the kind's authorizer, against a
 * fake upstream that answers only what carries the kind's credential
 * (test/support/auth-kinds.ts).
 */

const FROM = Date.parse('2026-03-01T10:00:00.000Z');
const window: Window = {
  from: FROM,
  to: FROM + 3_600_000,
  bounded: true,
  startedAt: FROM,
  cut: false,
};
const HOUR = 3_600_000;

/** A poller's config with the fake's source.auth, and `source` extended. */
function configOf(fake: AuthFake, source: Record<string, unknown> = {}) {
  return loadPoller(
    'p',
    {
      cron: '* * * * *',
      source: {
        url: `${UPSTREAM}/v1/items`,
        from_param: 'since',
        items: 'items',
        next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
        auth: fake.auth,
        ...source,
      },
      deliver: { type: 'webhook', url: 'https://hooks.example.net/in', secret: 'whsec_x' },
    },
    fake.env,
  );
}

/** The kind's source, wired as the poller wires it, over `world`. */
function sourceOf(
  fake: AuthFake,
  world: AuthWorld,
  vault = new MemoryVault(),
  source: Record<string, unknown> = {},
) {
  const entry = configOf(fake, source);
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  const auth = entry.config.source.auth;
  if (auth === undefined) throw new Error('no source.auth');
  const secrets = [...entry.secrets, ...credentialsIn(entry.config)];
  const clock = { now: FROM };
  const now = () => clock.now;
  const requested: Request[] = [];
  const fetch = async (request: Request) => {
    requested.push(request.clone());
    return world.fetch(request);
  };
  const authorizer = authorizerOf(auth, {
    tokenEndpoint: tokenEndpointOf(fetch, { timeout: 10_000, secrets, now, maxWait: HOUR }),
    vault: () => vault,
    now,
    secrets,
    origin: UPSTREAM,
    reconnect: 'give it a new refresh token',
  });
  if (typeof authorizer === 'string') throw new Error(authorizer);
  const http = new HttpSource(entry.config.source, fetch, secrets, now, { auth: authorizer });
  const upstream = () => requested.filter((request) => request.url.startsWith(UPSTREAM));
  return { http, authorizer, upstream, clock, fetch, config: entry.config, secrets };
}

/** Reads the window page by page as the engine does. */
async function readWindow(http: HttpSource) {
  const pages: PageResult[] = [];
  let cursor: string | null = null;
  do {
    const page = await http.fetchPage(window, cursor);
    pages.push(page);
    if (!page.ok) break;
    cursor = page.next;
  } while (cursor !== null && pages.length < 10);
  return pages;
}

/** What a source.auth table reaches besides source.url. */
function reachOf(auth: AuthConfig | undefined) {
  return auth === undefined ? [] : authKindOf(auth).reach(auth);
}

it('every auth kind has a fake, and every fake a kind', () => {
  expect(Object.keys(authFakes).sort()).toEqual(Object.keys(authKinds).sort());
});

for (const type of Object.keys(authKinds) as AuthType[]) {
  const fake: AuthFake = authFakes[type];
  const kind = authKinds[type];

  describe(`${type} auth`, () => {
    it('reads a window of several pages from an upstream that refuses a request without its credential', async () => {
      const world = await fake.world();
      const { http, upstream } = sourceOf(fake, world);
      const pages = await readWindow(http);
      expect(pages.map((page) => page.ok)).toEqual([true, true, true]);
      expect(pages.flatMap((page) => (page.ok ? page.updates.map((u) => u.id) : []))).toHaveLength(
        7,
      );
      for (const request of upstream()) expect(await world.accepts(request)).toBe(true);
      // A kind that renews a token asks for it once, not once per page.
      expect(world.tokens()).toBe(kind.renews ? 1 : 0);
    });

    it('carries its credential to a same-origin redirect', async () => {
      const world = await fake.world();
      const moved: AuthWorld = {
        ...world,
        fetch: async (request) => {
          const url = new URL(request.url);
          if (url.pathname !== '/v1/items') return world.fetch(request);
          const target = new URL(url);
          target.pathname = '/v2/items';
          // The Location the upstream sends holds none of the request's credential.
          for (const name of [...target.searchParams.keys()]) {
            if (name !== 'since' && name !== 'cursor') target.searchParams.delete(name);
          }
          if (!(await world.accepts(request))) return world.fetch(request);
          return new Response(null, { status: 301, headers: { location: target.toString() } });
        },
      };
      const { http, upstream } = sourceOf(fake, moved);
      expect(await http.fetchPage(window, null)).toMatchObject({ ok: true });
      expect(upstream().map((request) => new URL(request.url).pathname)).toEqual([
        '/v1/items',
        '/v2/items',
      ]);
    });

    it('shows none of its secrets in a failed page, when the upstream echoes the request', async () => {
      const world = await fake.world();
      const echoing: AuthWorld = {
        ...world,
        fetch: async (request) => {
          if (!request.url.startsWith(UPSTREAM)) return world.fetch(request);
          const headers = [...request.headers].map(([name, value]) => `${name}: ${value}`);
          return new Response(`bad gateway for ${request.url} ${headers.join('; ')}`, {
            status: 502,
          });
        },
      };
      const { http, authorizer } = sourceOf(fake, echoing);
      const page = await http.fetchPage(window, null);
      expect(page).toMatchObject({ ok: false, kind: 'transient' });
      const error = page.ok ? '' : page.error;
      expect(error).toContain('bad gateway for');
      for (const secret of [...fake.secrets, ...authorizer.learned()]) {
        expect(error).not.toContain(secret);
      }
    });

    it(
      kind.renews
        ? 'renews its token once after a 401 and sends the page again with the new one'
        : 'has nothing to renew after a 401: the page fails as misconfigured, asked once',
      async () => {
        const world = await fake.world();
        const { http, upstream } = sourceOf(fake, world);
        expect(await http.fetchPage(window, null)).toMatchObject({ ok: true });
        world.revoke();
        const again = await http.fetchPage(window, null);
        if (kind.renews) {
          expect(again).toMatchObject({ ok: true });
          expect(world.tokens()).toBe(2);
          expect(upstream()).toHaveLength(3);
        } else {
          expect(again).toMatchObject({ ok: false, kind: 'misconfigured' });
          expect(upstream()).toHaveLength(2);
        }
      },
    );

    if (kind.renews) {
      it('keeps its token until shortly before it expires, then renews it', async () => {
        const world = await fake.world();
        const { http, clock } = sourceOf(fake, world);
        expect(await http.fetchPage(window, null)).toMatchObject({ ok: true });
        clock.now += 58 * 60_000; // the fakes' tokens live an hour: still good
        expect(await http.fetchPage(window, null)).toMatchObject({ ok: true });
        expect(world.tokens()).toBe(1);
        clock.now += 60_000; // within a minute of its expiry: renewed before it is sent
        expect(await http.fetchPage(window, null)).toMatchObject({ ok: true });
        expect(world.tokens()).toBe(2);
      });
    }

    it('binds its secrets to where its kind sends them (R18)', () => {
      const entry = configOf(fake);
      if (!entry.ok) throw new Error(entry.errors.join('\n'));
      const requests = requestsOf(entry.config, 'p');
      for (const value of Object.values(fake.env)) {
        expect(originsOf(requests, value)).toEqual([fake.boundTo]);
      }
    });

    it('is held to FLEET_POLICY.hosts for every endpoint it reaches', () => {
      const entry = configOf(fake);
      if (!entry.ok) throw new Error(entry.errors.join('\n'));
      const policy = { ...DEFAULT_FLEET_POLICY, hosts: ['api.example.com', 'hooks.example.net'] };
      const beyond = reachOf(entry.config.source.auth).map((reached) => reached.key);
      expect(
        reachProblems('p', entry.config, policy).map((problem) => problem.split(':')[0]),
      ).toEqual(beyond);
      expect(beyond.length > 0).toBe(fake.boundTo !== UPSTREAM);
    });

    it('refuses a config that sets its credential in source.headers or source.params too', () => {
      const entry = configOf(fake, fake.clash);
      expect(entry.ok).toBe(false);
      expect(entry.ok ? '' : entry.errors.join('\n')).toMatch(/source\.(headers|params): has /);
    });

    it('refuses a key its table does not have', () => {
      const entry = configOf(fake, { auth: { ...fake.auth, tokn: 'x' } });
      expect(entry.ok ? '' : entry.errors.join('\n')).toContain('tokn');
    });

    it('shows its type in status, and never a secret', () => {
      const entry = configOf(fake);
      if (!entry.ok) throw new Error(entry.errors.join('\n'));
      const auth = entry.config.source.auth;
      if (auth === undefined) throw new Error('no source.auth');
      const view = authKindOf(auth).view(auth, () => ({
        state: 'ok',
        token_expires_at: null,
        last_renewal_at: null,
        renewals_24h: 0,
        last_error: null,
      }));
      expect(view.type).toBe(type);
      for (const secret of fake.secrets) expect(JSON.stringify(view)).not.toContain(secret);
    });
  });
}

describe('api_key in a header', () => {
  const headerKey: AuthFake = {
    ...authFakes.api_key,
    auth: { type: 'api_key', name: 'X-Api-Key', key: '${UPSTREAM_KEY}' },
    clash: { headers: { 'x-api-key': 'other' } },
  };

  it('sends the key under its name (in = "header" is the default), and never in the URL', async () => {
    const sent: Request[] = [];
    const world: AuthWorld = {
      ...(await headerKey.world()),
      fetch: async (request) => {
        sent.push(request);
        return request.headers.get('x-api-key') === headerKey.env.UPSTREAM_KEY
          ? Response.json({ items: [], next_cursor: null })
          : new Response('no key', { status: 401 });
      },
    };
    const { http } = sourceOf(headerKey, world);
    expect(await http.fetchPage(window, null)).toMatchObject({ ok: true });
    expect(sent.map((request) => new URL(request.url).searchParams.has('api_key'))).toEqual([
      false,
    ]);
  });

  it('refuses a header of the same name in source.headers, and a name that is no header name', () => {
    const clash = configOf(headerKey, headerKey.clash);
    expect(clash.ok ? '' : clash.errors.join('\n')).toContain(
      'source.headers: has a X-Api-Key header and source.auth sets one too: keep one of them',
    );
    const spaced = configOf(headerKey, { auth: { ...headerKey.auth, name: 'X Api Key' } });
    expect(spaced.ok ? '' : spaced.errors.join('\n')).toContain(
      'source.auth.name: "X Api Key" is not a header name',
    );
  });
});

describe('api_key in the query', () => {
  it('keeps the method, headers and body of the request it authorizes (a POST, say)', async () => {
    const { authorizer } = sourceOf(authFakes.api_key, await authFakes.api_key.world());
    const credential = await authorizer.credential();
    if (!credential.ok) throw new Error(credential.error);
    const sent = await credential.authorize(
      new Request(`${UPSTREAM}/v1/search?q=1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"after":"c1"}',
        redirect: 'manual',
      }),
    );
    expect(new URL(sent.url).searchParams.get('api_key')).toBe(authFakes.api_key.env.UPSTREAM_KEY);
    expect(new URL(sent.url).searchParams.get('q')).toBe('1');
    expect(sent.method).toBe('POST');
    expect(sent.redirect).toBe('manual');
    expect(sent.headers.get('content-type')).toBe('application/json');
    expect(await sent.text()).toBe('{"after":"c1"}');
  });
});

describe('api_key in the query of a request with a body', () => {
  const key = authFakes.api_key.env.UPSTREAM_KEY;
  const search = {
    method: 'POST',
    body: { filter: { since: '{from}' }, limit: 2 },
    from_param: undefined,
    next: { type: 'cursor', in: 'body', param: 'after', path: 'next_cursor' },
  };

  it("sends each page's POST, its body and a 307's hop with the key in the query", async () => {
    const seen: { method: string; url: URL; body: string; type: string | null }[] = [];
    const world: AuthWorld = {
      ...(await authFakes.api_key.world()),
      fetch: async (request) => {
        const url = new URL(request.url);
        seen.push({
          method: request.method,
          url,
          body: await request.text(),
          type: request.headers.get('content-type'),
        });
        if (url.searchParams.get('api_key') !== key) return new Response('no key', { status: 401 });
        if (url.pathname === '/v1/items') {
          return new Response(null, { status: 307, headers: { location: '/v2/items' } });
        }
        const after = JSON.parse(seen.at(-1)?.body ?? '{}').after;
        return Response.json(
          after === undefined
            ? { items: [{ id: 'a', updated_at: '2026-03-01T10:01:00Z' }], next_cursor: 'c1' }
            : { items: [{ id: 'b', updated_at: '2026-03-01T10:02:00Z' }], next_cursor: null },
        );
      },
    };
    const { http } = sourceOf(authFakes.api_key, world, new MemoryVault(), search);
    const pages = await readWindow(http);
    expect(pages.flatMap((page) => (page.ok ? page.updates.map((u) => u.id) : []))).toEqual([
      'a',
      'b',
    ]);
    expect(seen.map(({ url }) => url.pathname)).toEqual([
      '/v1/items',
      '/v2/items',
      '/v1/items',
      '/v2/items',
    ]);
    for (const { method, url, body, type } of seen) {
      expect(method).toBe('POST');
      expect(url.searchParams.get('api_key')).toBe(key);
      expect(type).toBe('application/json');
      expect(JSON.parse(body).filter.since).toBe('2026-03-01T10:00:00.000Z');
    }
    expect(JSON.parse(seen[3]?.body ?? '{}').after).toBe('c1');
  });

  it('sends a reconcile.fetch POST with {id} in its body and the key in the query', async () => {
    const seen: { method: string; url: URL; body: string }[] = [];
    const world: AuthWorld = {
      ...(await authFakes.api_key.world()),
      fetch: async (request) => {
        const url = new URL(request.url);
        seen.push({ method: request.method, url, body: await request.text() });
        if (url.searchParams.get('api_key') !== key) return new Response('no key', { status: 401 });
        return Response.json({ id: 'r1', updated_at: '2026-03-01T10:01:00Z' });
      },
    };
    const { authorizer, fetch, config, secrets } = sourceOf(authFakes.api_key, world);
    const table = {
      url: `${UPSTREAM}/v1/lookup`,
      method: 'POST' as const,
      body: { ids: ['{id}'] },
    };
    const byId = fetchRecordById(table, config.source, fetch, secrets, authorizer);
    const found = await byId('r1');
    expect(found.ok).toBe(true);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.method).toBe('POST');
    expect(seen[0]?.url.searchParams.get('api_key')).toBe(key);
    expect(JSON.parse(seen[0]?.body ?? '{}')).toEqual({ ids: ['r1'] });
  });
});
