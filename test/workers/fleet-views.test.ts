import { env, exports } from 'cloudflare:workers';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { beforeEach, describe, expect, it } from 'vitest';
import { app } from '../../src/http/app.ts';
import { api, runtimeConfig } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { installFakes } from './fakes.ts';

const { ADMIN_TOKEN, STATUS_TOKEN } = TEST_SECRETS;

beforeEach(() => {
  installFakes();
});

const call = (method: string, path: string, body?: unknown, token = ADMIN_TOKEN) =>
  api(method, path, body, { token });
const config = (labels: Record<string, string>, token = 'UPSTREAM_TOKEN') =>
  runtimeConfig({ labels }, { token });

describe('fleet views stay bounded at any number of pollers', () => {
  // 30 creates and 30 deletes, each through the registry and the poller's own object: a
  // second or two on an idle machine, more than vitest's default 5 s on a busy one.
  it('/metrics has no series per runtime poller: the fleet is counted by state, kind and the METRICS_LABELS keys', {
    timeout: 30_000,
  }, async () => {
    const names = Array.from(
      { length: 30 },
      (_, i) => `metric-${i}-${crypto.randomUUID().slice(0, 6)}`,
    );
    await Promise.all(
      names.map((name, i) =>
        call(
          'PUT',
          `/pollers/${name}`,
          config({ tier: i % 2 === 0 ? 'gold' : 'free', tenant: name }),
        ),
      ),
    );

    const response = await app.request(
      '/metrics',
      { headers: { authorization: `Bearer ${STATUS_TOKEN}` } },
      { ...env, METRICS_LABELS: 'tier' },
    );
    const text = await response.text();
    for (const name of names) expect(text).not.toContain(name);
    const families = parsePrometheusTextFormat(text) as {
      name: string;
      metrics: { labels?: Record<string, string>; value: string }[];
    }[];
    const fleet = families.find((family) => family.name === 'tidemark_fleet_pollers');
    const runtime = (fleet?.metrics ?? []).filter((metric) => metric.labels?.kind === 'runtime');
    expect(
      runtime.every((metric) => metric.labels?.tier === 'gold' || metric.labels?.tier === 'free'),
    ).toBe(true);
    expect(runtime.reduce((sum, metric) => sum + Number(metric.value), 0)).toBe(30);
    expect(runtime.length).toBeLessThanOrEqual(2 * 8); // tiers × states, not pollers
    for (const name of names) await call('DELETE', `/pollers/${name}`);
  });

  it('/healthz counts runtime pollers at fault from the registry, and names them only for a reader', async () => {
    const name = `unwell-${crypto.randomUUID().slice(0, 6)}`;
    // Its ${TENANT_TOKEN} is not set: misconfigured, so at fault.
    await call('PUT', `/pollers/${name}`, config({ tier: 'gold' }, 'TENANT_TOKEN'));

    const anonymous = await exports.default.fetch('https://tidemark.test/healthz');
    const publicBody = (await anonymous.json()) as Record<string, unknown>;
    expect(anonymous.status).toBe(503);
    expect(publicBody.unhealthy).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(publicBody)).not.toContain(name);

    const detail = (await (await call('GET', '/healthz', undefined, STATUS_TOKEN)).json()) as {
      at_fault: string[];
      fleet: { runtime: number; runtime_at_fault: number };
    };
    expect(detail.at_fault).toContain(name);
    expect(detail.fleet.runtime_at_fault).toBeGreaterThanOrEqual(1);
    await call('DELETE', `/pollers/${name}`);
  });
});
