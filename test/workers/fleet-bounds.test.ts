import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { beforeEach, describe, expect, it } from 'vitest';
import { app } from '../../src/http/app.ts';
import { cachedPollerExists, UNKNOWN_NAME_TTL_MS } from '../../src/http/public-cache.ts';
import type { Poller } from '../../src/poller/durable-object.ts';
import { REPORT_EVERY_MS } from '../../src/registry/heartbeat.ts';
import { type Registry, registryOf } from '../../src/registry/registry.ts';
import { secretKeysFrom } from '../../src/secrets/keys.ts';
import { PollerSecrets } from '../../src/secrets/store.ts';
import { watchdog } from '../../src/watchdog/index.ts';
import { api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { countingRegistry } from '../support/registry-calls.ts';
import { installFakes } from './fakes.ts';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const { ADMIN_TOKEN, STATUS_TOKEN, SECRETS_KEY } = TEST_SECRETS;

beforeEach(() => {
  installFakes();
});

const read = (path: string) => api('GET', path, undefined, { token: STATUS_TOKEN });
const registry = () => registryOf(env);
const inRegistry = <T>(check: (sql: SqlStorage) => T) =>
  runInDurableObject(registry(), (_instance: Registry, state) => check(state.storage.sql));

/** A runtime poller's row in the registry alone (no object): cheap, and nothing reports over it. */
async function listedOnly(name: string, config: unknown = runtimeConfig()) {
  const begun = await registry().beginPut(name, config, { tenant: 'acme' }, Date.now());
  if (!begun.ok) throw new Error(`beginPut refused: ${begun.reason}`);
  await registry().activate(name, begun.version, Date.now());
}

async function forget(name: string) {
  await registry().beginDelete(name, Date.now());
  await registry().finishDelete(name, {}, Date.now());
}

const randomKey = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));

describe("the fleet's lists never carry a config", () => {
  it('GET /pollers, the overview and the watchdog answer with a dozen 3 MB configs in the registry', {
    timeout: 60_000,
  }, async () => {
    const prefix = unique('huge');
    const names = Array.from({ length: 12 }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);
    // Past the PUT's size limit, as a registry written by an older deploy could hold them: 36 MB
    // in all, more than the 32 MiB an RPC value may carry.
    const padding = 'x'.repeat(3 * 1024 * 1024);
    for (const name of names) {
      await registry().beginPut(name, { ...runtimeConfig(), padding }, {}, Date.now());
    }

    const list = await read(`/pollers?search=${prefix}&limit=100`);
    expect(list.status).toBe(200);
    const body = (await list.json()) as { items: Record<string, unknown>[] };
    expect(body.items.map((item) => item.name)).toEqual(names);
    expect(JSON.stringify(body)).not.toContain('xxxx');

    const overview = await read(`/dashboard/panel?search=${prefix}`);
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain(`${prefix}-11`);

    await expect(watchdog(env)).resolves.toBeDefined();
    for (const name of names) await forget(name);
  });
});

describe('the deletion trail is bounded', () => {
  it('a deletion reason over 500 characters is a 400, and nothing is deleted', async () => {
    const name = unique('kept');
    expect((await api('PUT', `/pollers/${name}`, runtimeConfig())).status).toBe(201);

    const refused = await api('DELETE', `/pollers/${name}?reason=${'r'.repeat(501)}`);

    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toContain('500 characters');
    expect((await read(`/pollers/${name}/config`)).status).toBe(200);
    expect((await api('DELETE', `/pollers/${name}?reason=${'r'.repeat(500)}`)).status).toBe(200);
  });

  it('keeps the newest 10,000 deletions and none older than 90 days, pruned when one is added', async () => {
    const now = Date.now();
    await inRegistry((sql) => {
      sql.exec(
        'INSERT INTO deletions (name, at, detail) VALUES (?, ?, ?)',
        'ancient',
        now - 91 * DAY,
        '{}',
      );
      for (let i = 0; i < 10_005; i += 1) {
        sql.exec(
          'INSERT INTO deletions (name, at, detail) VALUES (?, ?, ?)',
          `filler-${i}`,
          now - DAY,
          '{}',
        );
      }
      // Newer than the fillers, so only its age can prune it.
      sql.exec(
        'INSERT INTO deletions (name, at, detail) VALUES (?, ?, ?)',
        'stale',
        now - 91 * DAY,
        '{}',
      );
    });
    const name = unique('gone');
    await api('PUT', `/pollers/${name}`, runtimeConfig());

    expect((await api('DELETE', `/pollers/${name}?reason=churn`)).status).toBe(200);

    const trail = await inRegistry((sql) => ({
      rows: sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM deletions').one().n,
      names: sql
        .exec<{ name: string }>("SELECT name FROM deletions WHERE name NOT LIKE 'filler-%'")
        .toArray()
        .map((row) => row.name),
      oldestFiller: sql
        .exec<{ name: string }>(
          "SELECT name FROM deletions WHERE name LIKE 'filler-%' ORDER BY seq LIMIT 1",
        )
        .one().name,
    }));
    expect(trail.rows).toBe(10_000);
    expect(trail.names).toEqual([name]);
    expect(trail.oldestFiller).toBe('filler-6'); // the two stale ones went, then the six oldest
    const listed = (await (await read('/pollers/deletions')).json()) as {
      deletions: { name: string; reason: string }[];
    };
    expect(listed.deletions[0]).toMatchObject({ name, reason: 'churn' });
    await inRegistry((sql) => sql.exec("DELETE FROM deletions WHERE name LIKE 'filler-%'"));
  });
});

describe('METRICS_LABELS stays bounded with a label value per poller', () => {
  it('sums the groups beyond the cap into one whose label values are "other"', async () => {
    const prefix = unique('tenanted');
    await inRegistry((sql) => {
      for (let i = 0; i < 520; i += 1) {
        sql.exec(
          `INSERT INTO pollers (name, kind, phase, labels, state, dead_letters, created_at, updated_at)
           VALUES (?, 'runtime', 'active', ?, 'ok', 1, 0, 0)`,
          `${prefix}-${i}`,
          JSON.stringify({ tenant: `t${i}` }),
        );
      }
    });

    const capped = await registry().summary(['tenant'], 3);
    const whole = await registry().summary(['tenant']);
    expect(capped).toHaveLength(3);
    expect(capped[2]).toMatchObject({ state: 'other', kind: 'other', labels: { tenant: 'other' } });
    const total = (groups: { count: number; deadLetters: number }[]) =>
      groups.reduce((sum, group) => sum + group.count + group.deadLetters, 0);
    expect(total(capped)).toBe(total(whole));

    const response = await app.request(
      '/metrics',
      { headers: { authorization: `Bearer ${STATUS_TOKEN}` } },
      { ...env, METRICS_LABELS: 'tenant' },
    );
    const families = parsePrometheusTextFormat(await response.text()) as {
      name: string;
      metrics: { labels?: Record<string, string>; value: string }[];
    }[];
    const fleet = families.find((family) => family.name === 'tidemark_fleet_pollers');
    const samples = fleet?.metrics ?? [];
    expect(samples).toHaveLength(500);
    expect(samples.filter((sample) => sample.labels?.tenant === 'other')).toEqual([
      { labels: { state: 'other', kind: 'other', tenant: 'other' }, value: expect.any(String) },
    ]);
    const counted = samples.reduce((sum, sample) => sum + Number(sample.value), 0);
    expect(counted).toBe(whole.reduce((sum, group) => sum + group.count, 0));
    await inRegistry((sql) => sql.exec('DELETE FROM pollers WHERE name LIKE ?', `${prefix}-%`));
  });
});

describe('GET /pollers?label=', () => {
  it('a label key outside the grammar is a 400 naming the grammar', async () => {
    for (const label of ['bad\\key=1', 'a"b=1', '9lives=yes', `${'k'.repeat(65)}=v`]) {
      const response = await read(`/pollers?label=${encodeURIComponent(label)}`);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toContain(
        'letters, digits and _',
      );
    }
    expect((await read('/pollers?label=tier%3Dgold')).status).toBe(200);
    expect((await read('/pollers?label=tier:gold')).status).toBe(200);
  });
});

describe('per-poller secrets', () => {
  const putSecret = (name: string, secret: string, value: string) =>
    api('PUT', `/pollers/${name}/secrets/${secret}`, value, { contentType: 'text/plain' });

  it('a NUDGE_TOKEN shorter than 16 bytes is a 400, and is not set', async () => {
    const name = unique('nudgeable');
    await api('PUT', `/pollers/${name}`, runtimeConfig());

    const short = await putSecret(name, 'NUDGE_TOKEN', 'fifteen-bytes!!');
    expect(short.status).toBe(400);
    expect(((await short.json()) as { error: string }).error).toContain('at least 16 bytes');
    expect((await putSecret(name, 'NUDGE_TOKEN', 'sixteen-bytes!!!')).status).toBe(201);
    const listed = (await (await api('GET', `/pollers/${name}/secrets`)).json()) as {
      secrets: { name: string }[];
    };
    expect(listed.secrets.map((secret) => secret.name)).toEqual(['NUDGE_TOKEN']);
    await api('DELETE', `/pollers/${name}`);
  });

  it('a secret body without a Content-Length is refused once it crosses the limit, not read whole', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        if (pulled > 1_000)
          controller.close(); // 1 MB: would be read whole without the cap
        else controller.enqueue(new Uint8Array(1024).fill(97));
      },
    });
    const request = new Request('https://tidemark.test/pollers/seed/secrets/BIG', {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/plain' },
      body: endless,
    });
    expect(request.headers.get('content-length')).toBeNull();

    const response = await app.request(request, undefined, env);

    expect(response.status).toBe(413);
    expect(pulled).toBeLessThan(20);
  });

  it('GET …/secrets says which key seals each secret: current, or previous during a rotation', async () => {
    const name = unique('rotated');
    await api('PUT', `/pollers/${name}`, runtimeConfig());
    await putSecret(name, 'UPSTREAM_TOKEN', 'upstream-value');
    const keys = async (environment: Env) => {
      const response = await app.request(
        `/pollers/${name}/secrets`,
        { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
        environment,
      );
      return ((await response.json()) as { secrets: { name: string; key: string }[] }).secrets;
    };

    expect(await keys(env)).toEqual([
      expect.objectContaining({ name: 'UPSTREAM_TOKEN', key: 'current' }),
    ]);
    // The Worker after step 2 of a rotation: a new key, the old one as SECRETS_KEY_PREVIOUS.
    const rotating = { ...env, SECRETS_KEY: randomKey(), SECRETS_KEY_PREVIOUS: SECRETS_KEY };
    expect(await keys(rotating)).toEqual([
      expect.objectContaining({ name: 'UPSTREAM_TOKEN', key: 'previous' }),
    ]);
    expect(await keys({ ...env, SECRETS_KEY: randomKey() })).toEqual([
      expect.objectContaining({ name: 'UPSTREAM_TOKEN', key: 'unknown' }),
    ]);
    await api('DELETE', `/pollers/${name}`);
  });

  it("the poller's status counts its secrets by the key that seals them", async () => {
    const name = unique('counted');
    await api('PUT', `/pollers/${name}`, runtimeConfig());
    await putSecret(name, 'UPSTREAM_TOKEN', 'upstream-value');
    // A secret sealed under a key this Worker no longer has (a rotation that skipped step 1).
    const lost = secretKeysFrom({ SECRETS_KEY: randomKey() });
    if (!lost.ok) throw lost.error;
    await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
      new PollerSecrets(state.storage.sql).put(lost.keys, name, 'OLD_TOKEN', 'old', Date.now()),
    );

    const status = (await (await read(`/status/${name}`)).json()) as { secrets: unknown };

    expect(status.secrets).toEqual({
      count: 2,
      under_current_key: 1,
      under_previous_key: 0,
      under_unknown_key: 1,
    });
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('public routes read the registry through a short cache', () => {
  it('/healthz without a token makes one registry call for many requests within the TTL', async () => {
    const counted = countingRegistry();
    for (let i = 0; i < 5; i += 1) {
      const response = await app.request('/healthz', {}, counted.env);
      expect([200, 503]).toContain(response.status);
    }
    expect(counted.calls()).toHaveLength(1);
    // A reader asks the registry itself.
    await app.request(
      '/healthz',
      { headers: { authorization: `Bearer ${STATUS_TOKEN}` } },
      counted.env,
    );
    expect(counted.calls()).toHaveLength(2);
  });

  it('token-less nudges for one poller make one registry call within the TTL', async () => {
    const name = unique('nudged');
    await api('PUT', `/pollers/${name}`, runtimeConfig());
    const token = 'a-nudge-token-of-24-byte';
    await api('PUT', `/pollers/${name}/secrets/NUDGE_TOKEN`, token, { contentType: 'text/plain' });
    const counted = countingRegistry();

    const replies = [];
    for (let i = 0; i < 5; i += 1) {
      replies.push(
        (
          await app.request(
            `/pollers/${name}/nudge?token=${i === 0 ? token : 'wrong-token-wrong-token'}`,
            { method: 'POST' },
            counted.env,
          )
        ).status,
      );
    }

    expect(replies).toEqual([202, 401, 401, 401, 401]);
    expect(counted.calls()).toEqual(['incarnationOf']);
    await api('DELETE', `/pollers/${name}`);
  });

  it('a poller created a moment after a nudge for its name is nudgeable within a second', async () => {
    const counted = countingRegistry();
    const name = unique('newborn');
    const t0 = Date.now();
    expect(await cachedPollerExists(counted.env, name, t0)).toBe(false);
    await api('PUT', `/pollers/${name}`, runtimeConfig());

    expect(await cachedPollerExists(counted.env, name, t0 + 500)).toBe(false);
    expect(await cachedPollerExists(counted.env, name, t0 + UNKNOWN_NAME_TTL_MS + 1)).toBe(true);
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('lists show lag as reported', () => {
  it('GET /pollers and the overview show the lag a poller reported, with when, growing only once the report is overdue', async () => {
    const name = unique('reported');
    await listedOnly(name);
    const now = Date.now();
    // Ticking every 15 s, 6 s behind; its checkpoint was last reported 4 minutes ago.
    const summary = { state: 'ok', deadLetters: 0, atFault: false, reason: null, dueAt: null };
    await registry().report(
      name,
      { ...summary, checkpoint: now - 4 * MINUTE - 6_000 },
      now - 4 * MINUTE,
    );

    const item = async () =>
      (
        (await (await read(`/pollers?search=${name}`)).json()) as {
          items: { lag_seconds: number; reported_at: string }[];
        }
      ).items[0];
    const fresh = await item();
    expect(fresh?.lag_seconds).toBe(6);
    expect(Date.parse(fresh?.reported_at ?? '')).toBe(now - 4 * MINUTE);
    const row = await read(`/dashboard/panel?search=${name}`);
    const cell = /<td class="lag"[^>]*>([\s\S]*?)<\/td>/.exec(await row.text())?.[1] ?? '';
    expect(
      cell
        .replace(/<[^>]+>/g, '')
        .replace(/\s+/g, ' ')
        .trim(),
    ).toBe('6s as of 4m ago');

    // A poller that died REPORT_EVERY and 5 minutes ago: its lag grows again once its report
    // is overdue, that is once it is older than REPORT_EVERY, when a live poller reports again.
    const died = now - REPORT_EVERY_MS - 5 * MINUTE;
    await registry().report(name, { ...summary, checkpoint: died - 6_000 }, died);
    const stale = await item();
    expect(stale?.lag_seconds).toBeGreaterThanOrEqual(5 * 60 + 6);
    expect(stale?.lag_seconds).toBeLessThan(5 * 60 + 10);
    // A minute short of REPORT_EVERY after its report, a live poller may not have reported
    // yet: still its lag then.
    const recent = now - REPORT_EVERY_MS + MINUTE;
    await registry().report(name, { ...summary, checkpoint: recent - 6_000 }, recent);
    expect((await item())?.lag_seconds).toBe(6);
    await forget(name);
  });
});

describe('/healthz names runtime pollers at fault with their reasons', () => {
  it('a misconfigured runtime poller is named with the reason it reported, short', async () => {
    const name = unique('unwell');
    // Its ${TENANT_TOKEN} is not set: misconfigured, so at fault, and it reports why.
    await api('PUT', `/pollers/${name}`, runtimeConfig({}, { token: 'TENANT_TOKEN' }));

    const body = (await (await read('/healthz')).json()) as {
      at_fault: string[];
      reasons: Record<string, string[]>;
    };

    expect(body.at_fault).toContain(name);
    const [reason] = body.reasons[name] ?? [];
    expect(reason).toContain('TENANT_TOKEN');
    expect(reason?.length).toBeLessThanOrEqual(200);
    await api('DELETE', `/pollers/${name}`);
  });
});
