import { runInDurableObject } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import { api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { FakeUpstream, installFakes } from './fakes.ts';

/**
 * R18: a poller's own secret goes only to the origins it was set for, whatever sequence of
 * replaces led to the config, and wherever in it the secret is named.
 */

const VALUE = 'tenant-token-r18-4c2e';
let upstream: FakeUpstream;
/** Each upstream request: its host and everything it carried (URL and headers). */
let sent: { host: string; carried: string }[];

beforeEach(() => {
  upstream = new FakeUpstream();
  sent = [];
  const recording = {
    handle: (request: Request) => {
      const url = new URL(request.url);
      sent.push({ host: url.host, carried: `${url} ${JSON.stringify([...request.headers])}` });
      return upstream.handle(request);
    },
  };
  installFakes({ 'upstream.test': recording, 'elsewhere.test': recording });
});

/** What reached `host` with the secret's value in it. */
const leakedTo = (host: string) =>
  sent.filter((request) => request.host === host && request.carried.includes(VALUE));

/** A tenant's runtime poller of `host`, its token the poller's own TENANT_TOKEN (or none). */
function tenant(host: string, named = true, extra: Record<string, unknown> = {}) {
  const base = runtimeConfig(
    { labels: {}, start_from: new Date(Date.now() - 60_000).toISOString() },
    { token: 'TENANT_TOKEN', url: `https://${host}/v1/sessions` },
  );
  const source = named ? base.source : { ...base.source, headers: {} };
  return { ...base, source, ...extra };
}

const put = (name: string, body: unknown) => api('PUT', `/pollers/${name}`, body);
const setToken = (name: string, body: Record<string, unknown> = {}) =>
  api('PUT', `/pollers/${name}/secrets/TENANT_TOKEN`, { value: VALUE, ...body });
const listed = async (name: string) =>
  (
    (await (await api('GET', `/pollers/${name}/secrets`)).json()) as {
      secrets: { name: string; origins: string[] | null }[];
    }
  ).secrets;

/** A poller of upstream.test with TENANT_TOKEN set under it. */
async function tenantPoller(prefix: string): Promise<string> {
  const name = unique(prefix);
  await put(name, tenant('upstream.test'));
  expect((await setToken(name)).status).toBe(201);
  return name;
}

/** Its secrets as stored before migration 20 (no origins), in an object that starts afresh (a deploy). */
async function asSetBeforeBinding(name: string): Promise<void> {
  await runInDurableObject(objectOf(name), (_instance: Poller, state) => {
    state.storage.sql.exec('UPDATE poller_secrets SET origins = NULL');
  });
  await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
    state.abort('test: a deploy'),
  ).catch(() => undefined);
}

const errorsOf = (reply: unknown) => ((reply as { errors?: string[] }).errors ?? []).join('\n');

const refusal = (name: string, origin: string) =>
  `poller "${name}": secret TENANT_TOKEN was set for https://upstream.test, and this config would send it to ${origin}`;

describe('a per-poller secret goes only where it was set for (R18)', () => {
  it('is bound, when set, to the origins its config sends it to, and lists them', async () => {
    const name = unique('bound');
    await put(name, tenant('upstream.test'));
    const set = await setToken(name);
    expect(await set.json()).toMatchObject({ origins: ['https://upstream.test'] });
    expect(await listed(name)).toEqual([
      expect.objectContaining({ name: 'TENANT_TOKEN', origins: ['https://upstream.test'] }),
    ]);
    upstream.add('s1', Date.now() - 30_000);
    expect(await objectOf(name).runNow()).toMatchObject({ outcome: 'ran' });
    expect(leakedTo('upstream.test').length).toBeGreaterThan(0);
    await api('DELETE', `/pollers/${name}`);
  });

  it('moved in two replaces (the URL first, then the name again) is refused at wiring, naming the secret and the origin, until it is set again', async () => {
    const name = await tenantPoller('two-step');
    await put(name, tenant('elsewhere.test', false));
    const named = await put(name, tenant('elsewhere.test'));
    expect(await named.json()).toMatchObject({
      config_errors: [expect.stringContaining(refusal(name, 'https://elsewhere.test'))],
    });
    const reply = await objectOf(name).runNow();
    expect(reply).toMatchObject({ outcome: 'misconfigured' });
    expect(errorsOf(reply)).toContain(refusal(name, 'https://elsewhere.test'));
    const status = await (await api('GET', `/status/${name}`)).text();
    expect(status).toContain('secret TENANT_TOKEN was set for https://upstream.test');
    expect(status).not.toContain(VALUE);
    expect(leakedTo('elsewhere.test')).toEqual([]);

    // Set again, for the config as it is now: it goes there.
    expect(await (await setToken(name)).json()).toMatchObject({
      origins: ['https://elsewhere.test'],
    });
    upstream.add('s1', Date.now() - 30_000);
    expect(await objectOf(name).runNow()).toMatchObject({ outcome: 'ran' });
    expect(leakedTo('elsewhere.test').length).toBeGreaterThan(0);
    await api('DELETE', `/pollers/${name}`);
  });

  it.each([
    [
      'reconcile.params',
      { every: '1h', url: 'https://elsewhere.test/v1/all', params: { key: '${TENANT_TOKEN}' } },
    ],
    [
      'reconcile.fetch',
      {
        every: '1h',
        url: 'https://elsewhere.test/v1/all',
        fetch: 'https://elsewhere.test/v1/sessions/{id}?key=${TENANT_TOKEN}',
      },
    ],
  ])(
    'named only in %s of a config moved elsewhere, is refused at wiring',
    async (_key, reconcile) => {
      const name = await tenantPoller('reconcile-named');
      await put(name, tenant('elsewhere.test', false, { reconcile }));
      const reply = await objectOf(name).runNow();
      expect(reply).toMatchObject({ outcome: 'misconfigured' });
      expect(errorsOf(reply)).toContain(refusal(name, 'https://elsewhere.test'));
      await api('POST', `/pollers/${name}/reconcile`);
      expect(leakedTo('elsewhere.test')).toEqual([]);
      await api('DELETE', `/pollers/${name}`);
    },
  );

  it('set with origins given, goes to those, and no further', async () => {
    const name = unique('given');
    await put(name, tenant('upstream.test'));
    const set = await setToken(name, {
      origins: ['https://elsewhere.test', 'https://upstream.test'],
    });
    expect(set.status).toBe(201);
    expect(await set.json()).toMatchObject({
      origins: ['https://elsewhere.test', 'https://upstream.test'],
    });
    await put(name, { ...tenant('elsewhere.test'), keep_secrets: true });
    upstream.add('s1', Date.now() - 30_000);
    expect(await objectOf(name).runNow()).toMatchObject({ outcome: 'ran' });
    expect(leakedTo('elsewhere.test').length).toBeGreaterThan(0);

    const bad = await setToken(name, { origins: ['https://elsewhere.test/path'] });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('is more than an origin');
    await api('DELETE', `/pollers/${name}`);
  });

  it('set before secrets were bound, is bound at the next wiring to where its config sends it then, and refused elsewhere afterwards', async () => {
    const name = await tenantPoller('legacy');
    await asSetBeforeBinding(name);
    expect(await listed(name)).toEqual([expect.objectContaining({ origins: null })]);
    await runInDurableObject(objectOf(name), (instance: Poller) => instance.status());
    expect(await listed(name)).toEqual([
      expect.objectContaining({ origins: ['https://upstream.test'] }),
    ]);
    await put(name, tenant('elsewhere.test', false));
    await put(name, tenant('elsewhere.test'));
    expect(await objectOf(name).runNow()).toMatchObject({ outcome: 'misconfigured' });
    expect(leakedTo('elsewhere.test')).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('set before secrets were bound, is bound under the config it was set for before a replace stores another', async () => {
    const name = await tenantPoller('legacy-put');
    await asSetBeforeBinding(name);
    expect(await listed(name)).toEqual([expect.objectContaining({ origins: null })]);
    // The object is woken first by the replace: the secret is bound under the old config.
    await put(name, { ...tenant('elsewhere.test'), keep_secrets: true });
    expect(await listed(name)).toEqual([
      expect.objectContaining({ origins: ['https://upstream.test'] }),
    ]);
    expect(await objectOf(name).runNow()).toMatchObject({ outcome: 'misconfigured' });
    expect(leakedTo('elsewhere.test')).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('a Worker secret FLEET_POLICY lists is the operator’s: not bound, it goes wherever the config says', async () => {
    const name = unique('worker-secret');
    const base = runtimeConfig(
      { labels: {}, start_from: new Date(Date.now() - 60_000).toISOString() },
      { url: 'https://elsewhere.test/v1/sessions' },
    );
    await put(name, base);
    upstream.add('s1', Date.now() - 30_000);
    expect(await objectOf(name).runNow()).toMatchObject({ outcome: 'ran' });
    await api('DELETE', `/pollers/${name}`);
  });
});
