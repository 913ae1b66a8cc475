import { describe, expect, it } from 'vitest';
import { api, createPoller, objectOf, setSecret } from '../support/fleet.ts';
import { installFakes } from './fakes.ts';

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
