import { exports } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { alarmOf, api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, FakeUpstream, installFakes } from './fakes.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;
/** The Authorization header of each upstream request, by the poller that sent it. */
let sent: { poller: string; authorization: string | null }[];
/** What the poller `name` sent (other tests' pollers may tick meanwhile). */
const presentedBy = (name: string) =>
  sent.filter((request) => request.poller === name).map((request) => request.authorization);

beforeEach(() => {
  upstream = new FakeUpstream();
  sent = [];
  const recording = {
    handle: (request: Request) => {
      const poller = new URL(request.url).searchParams.get('poller') ?? '';
      sent.push({ poller, authorization: request.headers.get('authorization') });
      return upstream.handle(request);
    },
  };
  ({ receiver } = installFakes({ 'upstream.test': recording }));
});

const call = (method: string, path: string, body?: string, contentType = 'text/plain') =>
  api(method, path, body, { contentType });

/** Runs the poller now (the run a tick would start, without waiting for the tick). */
async function tickNow(name: string) {
  await objectOf(name).runNow();
}

const config = (name: string, token: string) =>
  JSON.stringify(
    runtimeConfig(
      { labels: {}, start_from: new Date(Date.now() - MINUTE).toISOString() },
      { token, url: `https://upstream.test/v1/sessions?poller=${name}` },
    ),
  );

describe('per-poller secrets', () => {
  it('a poller whose ${NAME} is its own secret waits for it, then sends it; the value is never shown', async () => {
    const name = unique('tenant');
    const value = 'tenant-token-9f8e7d6c5b4a';
    const created = await call(
      'PUT',
      `/pollers/${name}`,
      config(name, 'TENANT_TOKEN'),
      'application/json',
    );
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ unset_secrets: ['TENANT_TOKEN'] });
    expect(await alarmOf(name)).toBeNull(); // misconfigured until the secret is set

    const set = await call('PUT', `/pollers/${name}/secrets/TENANT_TOKEN`, value);
    expect(set.status).toBe(201);
    expect(await set.text()).not.toContain(value);
    expect(await alarmOf(name)).not.toBeNull();

    upstream.add('s1', Date.now() - 30_000);
    await tickNow(name);
    expect(presentedBy(name)).toContain(`Bearer ${value}`);
    expect(receiver.ids()).toContain('s1');

    const listed = await call('GET', `/pollers/${name}/secrets`);
    const text = await listed.text();
    expect(JSON.parse(text)).toEqual({
      secrets: [
        {
          name: 'TENANT_TOKEN',
          set_at: expect.any(String),
          key: 'current',
          origins: ['https://upstream.test'],
        },
      ],
    });
    expect(text).not.toContain(value);
    // An upstream that echoes the header in an error: status shows it redacted.
    upstream.respondOnce(
      (request) => new Response(`bad ${request.headers.get('authorization')}`, { status: 500 }),
    );
    await tickNow(name);
    const status = await (await call('GET', `/status/${name}`)).text();
    expect(status).toContain('HTTP 500');
    expect(status).not.toContain(value);
    await call('DELETE', `/pollers/${name}`);
  });

  it('resolves a poller’s own secret before the Worker’s of the same name', async () => {
    const name = unique('own-first');
    await call('PUT', `/pollers/${name}`, config(name, 'UPSTREAM_TOKEN'), 'application/json');
    await call(
      'PUT',
      `/pollers/${name}/secrets/UPSTREAM_TOKEN`,
      JSON.stringify({ value: 'own-1234567' }),
      'application/json',
    );
    await tickNow(name);
    expect(presentedBy(name)).toEqual(['Bearer own-1234567']);

    // Deleted, the Worker's takes over again.
    expect((await call('DELETE', `/pollers/${name}/secrets/UPSTREAM_TOKEN`)).status).toBe(200);
    await tickNow(name);
    expect(presentedBy(name).at(-1)).toBe(`Bearer ${TEST_SECRETS.UPSTREAM_TOKEN}`);
    expect((await call('DELETE', `/pollers/${name}/secrets/UPSTREAM_TOKEN`)).status).toBe(404);
    await call('DELETE', `/pollers/${name}`);
  });

  it('refuses a config that names the key sealing the secrets', async () => {
    const name = unique('leaky');
    const response = await call(
      'PUT',
      `/pollers/${name}`,
      config(name, 'SECRETS_KEY'),
      'application/json',
    );
    expect(response.status).toBe(400);
    expect(await response.text()).not.toContain(TEST_SECRETS.SECRETS_KEY);
  });

  it('needs the admin token, and answers 404 for a poller that does not exist', async () => {
    const anonymous = await exports.default.fetch('https://tidemark.test/pollers/seed/secrets');
    expect(anonymous.status).toBe(401);
    expect((await call('GET', '/pollers/nobody-here/secrets')).status).toBe(404);
  });
});
