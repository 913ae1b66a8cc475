import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { originsOf, requestsOf } from '../../src/config/secret-destinations.ts';

const VALUE = 'own-secret-value-1234';
const API = 'https://api.example.com';
const LOGIN = 'https://login.example.com';
const HOOKS = 'https://hooks.example.com';

/** A raw config, as a patch changes it. */
type Raw = {
  source: Record<string, unknown>;
  deliver: Record<string, unknown>;
  [key: string]: unknown;
};

/** A poller of api.example.com delivering to hooks.example.com, with `patch` applied, ${SECRET} = VALUE. */
function configWith(patch: (config: Raw) => void) {
  const raw: Raw = {
    every: '1m',
    source: { url: `${API}/v1/items`, from_param: 'since', headers: {}, params: {} },
    deliver: { type: 'webhook', url: `${HOOKS}/in`, secret: '${HOOK_SECRET}' },
  };
  patch(raw);
  const entry = loadPoller('p', raw, { SECRET: VALUE, HOOK_SECRET: 'whsec_other-value' });
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry.config;
}

const reach = (patch: (config: Raw) => void) =>
  originsOf(requestsOf(configWith(patch), 'p'), VALUE);

describe('where a config sends a secret, wherever in it the secret is named', () => {
  it.each<[string, (config: Raw) => void, string[]]>([
    ['source.headers', (c) => (c.source.headers = { 'X-Key': '${SECRET}' }), [API]],
    ['source.params', (c) => (c.source.params = { key: '${SECRET}' }), [API]],
    ['source.url', (c) => (c.source.url = `${API}/v1/items?key=\${SECRET}`), [API]],
    [
      'source.auth (bearer)',
      (c) => (c.source.auth = { type: 'bearer', token: '${SECRET}' }),
      [API],
    ],
    [
      'source.auth (basic)',
      (c) => (c.source.auth = { type: 'basic', username: 'u', password: '${SECRET}' }),
      [API],
    ],
    [
      'source.auth.client_secret (oauth2): the token endpoint only',
      (c) =>
        (c.source.auth = {
          type: 'oauth2',
          grant: 'client_credentials',
          token_url: `${LOGIN}/token`,
          client_id: 'c',
          client_secret: '${SECRET}',
        }),
      [LOGIN],
    ],
    [
      'source.deletions.params',
      (c) => (c.source.deletions = { url: `${API}/deleted`, params: { key: '${SECRET}' } }),
      [API],
    ],
    [
      'reconcile.params',
      (c) => (c.reconcile = { every: '1h', url: `${API}/all`, params: { key: '${SECRET}' } }),
      [API],
    ],
    [
      'reconcile.fetch',
      (c) =>
        (c.reconcile = {
          every: '1h',
          url: `${API}/all`,
          fetch: `${API}/items/{id}?key=\${SECRET}`,
        }),
      [API],
    ],
    [
      'source.body',
      (c) => Object.assign(c.source, { method: 'POST', body: { auth: { key: '${SECRET}' } } }),
      [API],
    ],
    [
      'source.deletions.body',
      (c) => (c.source.deletions = { url: `${API}/deleted`, method: 'POST', body: ['${SECRET}'] }),
      [API],
    ],
    [
      'reconcile.body',
      (c) =>
        (c.reconcile = {
          every: '1h',
          url: `${API}/all`,
          method: 'POST',
          body: { k: '${SECRET}' },
        }),
      [API],
    ],
    [
      'reconcile.fetch.body',
      (c) =>
        (c.reconcile = {
          every: '1h',
          url: `${API}/all`,
          fetch: { url: `${API}/graphql`, method: 'POST', body: { id: '{id}', k: '${SECRET}' } },
        }),
      [API],
    ],
    ['deliver.secret', (c) => (c.deliver.secret = 'whsec_${SECRET}'), [HOOKS]],
  ])('%s', (_where, patch, origins) => {
    expect(reach(patch)).toEqual(origins);
  });

  it('a source header goes with every request to the upstream, and not to the token endpoint or the receiver', () => {
    const requests = requestsOf(
      configWith((c) => {
        c.source.headers = { 'X-Key': '${SECRET}' };
        c.source.deletions = { url: `${API}/deleted` };
        c.reconcile = { every: '1h', url: `${API}/all`, fetch: `${API}/items/{id}` };
      }),
      'p',
    );
    const carrying = requests
      .filter((request) => JSON.stringify(request.carries).includes(VALUE))
      .map((request) => request.key);
    expect(carrying).toEqual([
      'source.url',
      'source.deletions.url',
      'reconcile.url',
      'reconcile.fetch',
    ]);
  });

  it('a URL no request accounts for counts as a request carrying all of the config', () => {
    const origins = reach((c) => {
      c.source.headers = { 'X-Key': '${SECRET}' };
      c.source.params = { callback: 'https://callback.example.net/cb' };
    });
    expect(origins).toEqual([API, 'https://callback.example.net']);
  });

  it('a value no request carries counts as sent to every origin of the config', () => {
    const origins = reach((c) => {
      c.labels = { note: 'nothing here' };
      c.source.auth = {
        type: 'oauth2',
        grant: 'client_credentials',
        token_url: `${LOGIN}/token`,
        client_id: 'c',
        client_secret: 'literal',
      };
    });
    expect(origins).toEqual([API, HOOKS, LOGIN]);
  });
});
