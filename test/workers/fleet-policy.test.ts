import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { STATIC_INCARNATION } from '../../src/catalog.ts';
import { app } from '../../src/http/app.ts';
import { alarmOf, api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { TEST_FLEET_POLICY } from '../support/fleet-policy.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

/**
 * FLEET_POLICY through the API, under the test Worker's own policy (TEST_FLEET_POLICY: the
 * upstream token and the webhook secret, nothing else). Other policies are in
 * test/engine/fleet-policy.test.ts; a test that needs another one here passes it to the app.
 */

const { ADMIN_TOKEN } = TEST_SECRETS;
let upstream: FakeUpstream;
/** Each upstream request: the host it went to, the poller (`?poller=`) and its credentials. */
let sent: { host: string; poller: string; authorization: string | null }[];

beforeEach(() => {
  upstream = new FakeUpstream();
  sent = [];
  const recording = {
    handle: (request: Request) => {
      const url = new URL(request.url);
      const poller = url.searchParams.get('poller') ?? '';
      sent.push({ host: url.host, poller, authorization: request.headers.get('authorization') });
      return upstream.handle(request);
    },
  };
  installFakes({ 'upstream.test': recording, 'elsewhere.test': recording });
});

const put = (name: string, body: unknown) => api('PUT', `/pollers/${name}`, body);
const errorsOf = async (response: Response) =>
  ((await response.json()) as { errors?: string[] }).errors ?? [];

/** A runtime poller whose upstream requests say which poller sent them. */
const tenantConfig = (name: string, token: string, host = 'upstream.test') =>
  runtimeConfig(
    { labels: {}, start_from: new Date(Date.now() - 60_000).toISOString() },
    { token, url: `https://${host}/v1/sessions?poller=${name}` },
  );

/** PUT through the app with another FLEET_POLICY than the test Worker's. */
function putUnder(policy: unknown, name: string, body: unknown) {
  return app.request(
    `/pollers/${name}`,
    {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    },
    { ...env, FLEET_POLICY: policy },
  );
}

describe('PUT /pollers/:name: what a runtime config may name as ${NAME}', () => {
  it.each(['ADMIN_TOKEN', 'STATUS_TOKEN'])(
    'refuses ${%s} (400), naming the key, and stores nothing',
    async (token) => {
      const name = unique('reserved');
      const response = await put(name, tenantConfig(name, token));
      expect(response.status).toBe(400);
      const text = await response.text();
      expect(text).toContain(
        `source.headers.Authorization: \${${token}} cannot be used in a config: ${token} is the Worker's own credential: FLEET_POLICY.env can never list it`,
      );
      expect(text).not.toContain(TEST_SECRETS[token as 'ADMIN_TOKEN' | 'STATUS_TOKEN']);
      expect((await api('GET', `/pollers/${name}/config`)).status).toBe(404);
    },
  );

  it('never gives it a Worker secret FLEET_POLICY.env does not list: the poller waits for its own, and the hint says where to set it', async () => {
    const name = unique('unlisted');
    // QUERY_KEY is a Worker secret (a static poller's), not in the test Worker's policy.
    const response = await put(name, tenantConfig(name, 'QUERY_KEY'));
    expect(response.status).toBe(201);
    const hint = `\${QUERY_KEY} is not set (set it with PUT /pollers/${name}/secrets/QUERY_KEY)`;
    expect(await response.json()).toMatchObject({
      unset_secrets: ['QUERY_KEY'],
      config_errors: [expect.stringContaining(hint)],
    });
    expect(await alarmOf(name)).toBeNull();
    expect(await objectOf(name).runNow()).toMatchObject({ outcome: 'misconfigured' });
    expect(sent.filter((request) => request.poller === name)).toEqual([]);
    const status = await (await api('GET', `/status/${name}`)).text();
    expect(status).toContain(hint);
    expect(status).not.toContain('wrangler secret put');
    await api('DELETE', `/pollers/${name}`);
  });

  it('does not list in unset_secrets the secrets the poller already has', async () => {
    const name = unique('has-secret');
    expect(await (await put(name, tenantConfig(name, 'TENANT_TOKEN'))).json()).toMatchObject({
      unset_secrets: ['TENANT_TOKEN'],
    });
    await api('PUT', `/pollers/${name}/secrets/TENANT_TOKEN`, { value: 'tenant-token-1234' });

    const replaced = await put(name, { ...tenantConfig(name, 'TENANT_TOKEN'), every: '5m' });

    expect(replaced.status).toBe(200);
    const body = (await replaced.json()) as Record<string, unknown>;
    expect(body.unset_secrets).toBeUndefined();
    expect(body.config_errors).toBeUndefined();
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('PUT /pollers/:name: what a runtime config may reach', () => {
  it('refuses source.service = "SELF" (tidemark’s own API) unless FLEET_POLICY.bindings lists it', async () => {
    const name = unique('self');
    const config = tenantConfig(name, 'UPSTREAM_TOKEN');
    const body = { ...config, source: { ...config.source, service: 'SELF' } };
    const refused = await put(name, body);
    expect(refused.status).toBe(400);
    expect(await errorsOf(refused)).toEqual([
      `poller "${name}": source.service: the binding "SELF" is not in FLEET_POLICY.bindings`,
    ]);

    const listed = await putUnder({ ...TEST_FLEET_POLICY, bindings: ['SELF'] }, name, body);
    expect(listed.status).toBe(201);
    await api('DELETE', `/pollers/${name}`);
  });

  it('refuses a queue and a handler FLEET_POLICY does not list', async () => {
    const name = unique('queue');
    const queued = await put(name, {
      ...tenantConfig(name, 'UPSTREAM_TOKEN'),
      deliver: { type: 'queue', binding: 'DELIVERY_QUEUE', name: 'demo-sessions' },
    });
    expect(queued.status).toBe(400);
    expect(await errorsOf(queued)).toEqual([
      `poller "${name}": deliver.binding: the queue "DELIVERY_QUEUE" is not in FLEET_POLICY.bindings`,
      `poller "${name}": deliver.name: the handler "demo-sessions" is not in FLEET_POLICY.handlers`,
    ]);
    const handled = await put(name, {
      ...tenantConfig(name, 'UPSTREAM_TOKEN'),
      deliver: { type: 'handler', name: 'demo-sessions' },
    });
    expect(await errorsOf(handled)).toEqual([
      `poller "${name}": deliver.name: the handler "demo-sessions" is not in FLEET_POLICY.handlers`,
    ]);
    expect((await api('GET', `/pollers/${name}/config`)).status).toBe(404);
  });

  it('refuses a source.max_body above FLEET_POLICY.max_body (16MB unless it says more), naming both', async () => {
    const name = unique('big-body');
    const config = tenantConfig(name, 'UPSTREAM_TOKEN');
    const body = { ...config, source: { ...config.source, max_body: '8GB' } };
    const refused = await put(name, body);
    expect(refused.status).toBe(400);
    expect(await errorsOf(refused)).toEqual([
      `poller "${name}": source.max_body: 8GB is above FLEET_POLICY.max_body (16MB): set it to at most 16MB`,
    ]);
    expect((await api('GET', `/pollers/${name}/config`)).status).toBe(404);

    const raised = await putUnder({ ...TEST_FLEET_POLICY, max_body: '8GB' }, name, body);
    expect(raised.status).toBe(201);
    await api('DELETE', `/pollers/${name}`);
  });

  it('refuses http:// URLs: credentials would travel in clear', async () => {
    const name = unique('plain');
    const response = await put(name, {
      ...runtimeConfig({}, { url: 'http://upstream.test/v1/sessions' }),
    });
    expect(response.status).toBe(400);
    expect(await errorsOf(response)).toEqual([
      `poller "${name}": source.url: http:// is refused by FLEET_POLICY.allow_http = false (its headers and secrets would travel in clear): use https://`,
    ]);
  });

  it('a stored config the policy refuses now is misconfigured, with the same message, without a PUT', async () => {
    const name = unique('tightened');
    const config = tenantConfig(name, 'UPSTREAM_TOKEN');
    const body = { ...config, source: { ...config.source, service: 'SELF' } };
    // Stored under a policy that listed SELF; the Worker's policy (no bindings) is the one now.
    const stored = await putUnder({ ...TEST_FLEET_POLICY, bindings: ['SELF'] }, name, body);
    const refusal = `poller "${name}": source.service: the binding "SELF" is not in FLEET_POLICY.bindings`;
    expect(await stored.json()).toMatchObject({ config_errors: [refusal] });

    expect(await objectOf(name).runNow()).toEqual({
      outcome: 'misconfigured',
      errors: [refusal],
    });
    expect(await alarmOf(name)).toBeNull();
    const status = (await (await api('GET', `/status/${name}`)).json()) as {
      config_errors: string[];
    };
    expect(status.config_errors).toEqual([refusal]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('an invalid FLEET_POLICY refuses every PUT (500, saying why): never a looser policy', async () => {
    const name = unique('no-policy');
    const response = await putUnder(
      { env: ['WEBHOOK_SECRET', 'ADMIN_TOKEN'] },
      name,
      tenantConfig(name, 'UPSTREAM_TOKEN'),
    );
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: string }).error).toBe(
      "FLEET_POLICY is invalid: FLEET_POLICY.env: can never list ADMIN_TOKEN: it is the Worker's own credential, never a runtime poller's",
    );
    expect((await api('GET', `/pollers/${name}/config`)).status).toBe(404);
  });
});

describe('PUT /pollers/:name: a body over FLEET_POLICY.max_config_bytes is a 413', () => {
  const tooBig = () => JSON.stringify({ ...runtimeConfig(), padding: 'x'.repeat(40_000) });

  it('when its Content-Length says so', async () => {
    const response = await put(unique('big'), tooBig());
    expect(response.status).toBe(413);
    expect(await response.text()).toContain('FLEET_POLICY.max_config_bytes');
  });

  it('when it declares no length, read no further than the limit', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(1024));
    const total = 4 * 1024 * 1024;
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= total) return controller.close();
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const response = await app.request(
      `/pollers/${unique('streamed')}`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body,
      },
      env,
    );
    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(total);
  });

  it('a smaller limit in the policy is the one applied', async () => {
    const name = unique('small-limit');
    const response = await putUnder(
      { ...TEST_FLEET_POLICY, max_config_bytes: 256 },
      name,
      runtimeConfig(),
    );
    expect(response.status).toBe(413);
  });
});

describe('a replace that moves a request to another origin', () => {
  async function withSecret(name: string) {
    await put(name, tenantConfig(name, 'TENANT_TOKEN'));
    await api('PUT', `/pollers/${name}/secrets/TENANT_TOKEN`, { value: 'tenant-token-5678' });
    const secrets = async () =>
      (
        (await (await api('GET', `/pollers/${name}/secrets`)).json()) as {
          secrets: { name: string }[];
        }
      ).secrets.map((secret) => secret.name);
    expect(await secrets()).toEqual(['TENANT_TOKEN']);
    return secrets;
  }

  it('unsets the poller’s own secrets it would send there (not on the same origin): the poller waits for them again', async () => {
    const name = unique('moved');
    const secrets = await withSecret(name);
    // Another path, the port spelled out, the host in capitals: the same origin.
    const config = tenantConfig(name, 'TENANT_TOKEN');
    const url = `https://UPSTREAM.test:443/v2/sessions?poller=${name}`;
    const same = await put(name, { ...config, source: { ...config.source, url } });
    expect(((await same.json()) as Record<string, unknown>).secrets_unset).toBeUndefined();
    expect(await secrets()).toEqual(['TENANT_TOKEN']);

    const moved = await put(name, tenantConfig(name, 'TENANT_TOKEN', 'elsewhere.test'));

    expect(moved.status).toBe(200);
    expect(await moved.json()).toMatchObject({
      secrets_unset: ['TENANT_TOKEN'],
      unset_secrets: ['TENANT_TOKEN'],
    });
    expect(await secrets()).toEqual([]);
    expect(await objectOf(name).runNow()).toMatchObject({ outcome: 'misconfigured' });
    expect(sent.filter((request) => request.host === 'elsewhere.test')).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('keeps them stored with "keep_secrets": true (not stored with the config), but sends them only where they were set for', async () => {
    const name = unique('kept');
    const secrets = await withSecret(name);

    const moved = await put(name, {
      ...tenantConfig(name, 'TENANT_TOKEN', 'elsewhere.test'),
      keep_secrets: true,
    });

    expect(moved.status).toBe(200);
    const body = (await moved.json()) as Record<string, unknown>;
    expect(body.secrets_unset).toBeUndefined();
    expect(body.unset_secrets).toBeUndefined();
    expect(await secrets()).toEqual(['TENANT_TOKEN']);
    const stored = await (await api('GET', `/pollers/${name}/config`)).text();
    expect(stored).not.toContain('keep_secrets');
    upstream.add('s1', Date.now() - 30_000);
    expect(await objectOf(name).runNow()).toMatchObject({ outcome: 'misconfigured' });
    expect(sent.filter((request) => request.poller === name)).toEqual([]);
    // Set again for the new place, it goes there.
    await api('PUT', `/pollers/${name}/secrets/TENANT_TOKEN`, { value: 'tenant-token-5678' });
    await objectOf(name).runNow();
    expect(sent.filter((request) => request.poller === name)).toEqual([
      { host: 'elsewhere.test', poller: name, authorization: 'Bearer tenant-token-5678' },
    ]);
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('a static poller', () => {
  it('refuses its own secret of a name the Worker sets (it would never be read), and sends the Worker’s', async () => {
    // A fresh object runs the static poller "seed" (its ${UPSTREAM_TOKEN}) with its own storage.
    const seed = newPoller('seed');
    const set = await seed
      .stub()
      .putSecret(STATIC_INCARNATION, 'UPSTREAM_TOKEN', 'own-would-shadow-1234');
    expect(set).toMatchObject({ outcome: 'refused', status: 409 });
    expect(set.outcome === 'refused' ? set.error : '').toContain(
      "reads the Worker's UPSTREAM_TOKEN first",
    );
    expect(await seed.stub().listSecrets()).toEqual([]);
    await seed.setCheckpoint(Date.now() - 60_000);
    upstream.add('s1', Date.now() - 30_000);

    await seed.stub().runNow();

    const presented = sent.filter((request) => request.poller === '').map((r) => r.authorization);
    expect(presented.length).toBeGreaterThan(0);
    expect(new Set(presented)).toEqual(new Set([`Bearer ${TEST_SECRETS.UPSTREAM_TOKEN}`]));
  });
});
