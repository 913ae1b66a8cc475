import { describe, expect, it } from 'vitest';
import { api, createPoller, objectOf, setSecret } from '../support/fleet.ts';
import { FakeSaas } from './fake-saas.ts';
import { installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;

/** An endpoint that answers `status` with the Authorization header it was sent, decoded too. */
function echoing(status: number) {
  return {
    handle: async (request: Request) => {
      const header = request.headers.get('authorization') ?? '';
      const payload = header.replace(/^\S+\s+/, '');
      let decoded = '';
      try {
        decoded = atob(payload);
      } catch {
        decoded = payload;
      }
      return new Response(`denied: ${header} | ${payload} | ${decoded}`, { status });
    },
  };
}

const statusText = async (name: string) => (await api('GET', `/status/${name}`)).text();

describe('an Authorization header an endpoint echoes back is shown redacted', () => {
  it('a basic header in an upstream 401 body: status shows neither its base64, nor user:password, nor the password', async () => {
    installFakes({ 'upstream.test': echoing(401) });
    const password = 'literal-pass-9f2c';
    const name = await createPoller('basic-echo', {
      sinceMs: MINUTE,
      source: { headers: {}, auth: { type: 'basic', username: 'svc-user', password } },
    });
    await objectOf(name).runNow();
    const shown = await statusText(name);
    expect(shown).toContain('HTTP 401');
    for (const leak of [btoa(`svc-user:${password}`), `svc-user:${password}`, password]) {
      expect(shown).not.toContain(leak);
    }
    await api('DELETE', `/pollers/${name}`);
  });

  it('a credential written into the config as it is (an X-Api-Key header, an api_key parameter) is redacted too, its URL not', async () => {
    const key = 'literal-api-key-5b07';
    const param = 'literal-param-key-e3a9';
    installFakes({
      'upstream.test': {
        handle: async (request: Request) =>
          new Response(`bad key ${request.headers.get('x-api-key')} for ${request.url}`, {
            status: 403,
          }),
      },
    });
    const name = await createPoller('literal-key', {
      sinceMs: MINUTE,
      source: { headers: { 'X-Api-Key': key }, params: { api_key: param } },
    });
    await objectOf(name).runNow();
    const shown = await statusText(name);
    expect(shown).toContain('HTTP 403');
    expect(shown).toContain('https://upstream.test/v1/sessions');
    expect(shown).not.toContain(key);
    expect(shown).not.toContain(param);
    await api('DELETE', `/pollers/${name}`);
  });

  it('the client’s basic header in a token endpoint’s error body: status shows neither its base64 nor client:secret', async () => {
    installFakes({ 'login.test': echoing(401) });
    const secret = 'client-secret-7d41e0';
    const name = await createPoller('token-echo', {
      sinceMs: MINUTE,
      source: {
        headers: {},
        auth: {
          type: 'oauth2',
          grant: 'client_credentials',
          token_url: 'https://login.test/token',
          client_id: 'crm-client',
          client_secret: '${CRM_CLIENT_SECRET}',
        },
      },
    });
    await setSecret(name, 'CRM_CLIENT_SECRET', secret);
    await objectOf(name).runNow();
    const shown = await statusText(name);
    expect(shown).toContain('HTTP 401');
    for (const leak of [btoa(`crm-client:${secret}`), `crm-client:${secret}`, secret]) {
      expect(shown).not.toContain(leak);
    }
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('a secret in the URL of the deletions stream or the listing is shown as ${NAME}', () => {
  // The URL parser writes `{` and `}` as %7B and %7D but leaves `|` as it is: no encoding of
  // the value may show, only the name.
  const key = 'p4ss{w0rd}|xyz';

  /** upstream.test: the sessions as the fake SaaS answers them; 500 under /k/. */
  function failingUnderK() {
    const saas = new FakeSaas();
    installFakes({
      'upstream.test': {
        handle: async (request: Request) =>
          new URL(request.url).pathname.startsWith('/k/')
            ? new Response('down', { status: 500 })
            : saas.handle(request),
      },
    });
  }

  it('a deletions stream that fails shows its URL with ${KEY} in status', async () => {
    failingUnderK();
    const name = await createPoller('deletions-url-secret', {
      sinceMs: MINUTE,
      source: { deletions: { url: 'https://upstream.test/k/${KEY}/deleted' } },
    });
    await setSecret(name, 'KEY', key);
    await objectOf(name).runNow();
    const shown = await statusText(name);
    expect(shown).toContain('HTTP 500');
    expect(shown).toContain('https://upstream.test/k/${KEY}/deleted');
    expect(shown).not.toContain('p4ss');
    await api('DELETE', `/pollers/${name}`);
  });

  it('a listing that fails shows its URL with ${KEY} in status', async () => {
    failingUnderK();
    const name = await createPoller('listing-url-secret', {
      sinceMs: MINUTE,
      reconcile: { every: '1d', url: 'https://upstream.test/k/${KEY}/all', items: 'sessions' },
    });
    await setSecret(name, 'KEY', key);
    await objectOf(name).runNow();
    await newPoller(name, name).settle();
    expect((await api('POST', `/pollers/${name}/reconcile`)).status).toBe(202);
    await newPoller(name, name).settle();
    const shown = await statusText(name);
    expect(shown).toContain('HTTP 500');
    expect(shown).toContain('https://upstream.test/k/${KEY}/all');
    expect(shown).not.toContain('p4ss');
    await api('DELETE', `/pollers/${name}`);
  });
});
