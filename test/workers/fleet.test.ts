import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import { registryOf } from '../../src/registry/registry.ts';
import { watchdog } from '../../src/watchdog/index.ts';
import { alarmOf, api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { writtenBehindTheStore } from './poller.ts';

const MINUTE = 60_000;
const { ADMIN_TOKEN, STATUS_TOKEN } = TEST_SECRETS;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

const call = (method: string, path: string, body?: unknown, token = ADMIN_TOKEN) =>
  api(method, path, body, { token });
const config = (overrides: Record<string, unknown> = {}) => runtimeConfig(overrides);

describe('runtime pollers: PUT, GET, DELETE', () => {
  it('creates a poller with one PUT (201), and it starts delivering with no change to wrangler.toml', {
    timeout: 30_000,
  }, async () => {
    const name = unique('tenant');
    upstream.add('s1', Date.now() - 30_000);
    const created = await call('PUT', `/pollers/${name}`, {
      ...config({ every: '1s' }),
      start_from: new Date(Date.now() - MINUTE).toISOString(),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ name, version: 1, created: true });

    // Its own alarm ticks: nothing else calls it.
    await vi.waitUntil(() => receiver.ids().includes('s1'), { timeout: 15_000, interval: 50 });
    const status = (await (
      await call('GET', `/status/${name}`, undefined, STATUS_TOKEN)
    ).json()) as {
      last_run: { trigger: string } | null;
    };
    expect(status.last_run?.trigger).toBe('cron');
    await call('DELETE', `/pollers/${name}`);
  });

  it('books its ticks from its cron or its every, on its own alarm', async () => {
    const byCron = unique('cron');
    const byEvery = unique('every');
    await call('PUT', `/pollers/${byCron}`, config({ every: undefined, cron: '*/5 * * * *' }));
    await call('PUT', `/pollers/${byEvery}`, config({ every: '15s' }));

    const cronAlarm = (await alarmOf(byCron)) ?? 0;
    expect(cronAlarm % (5 * MINUTE)).toBe(0);
    expect(cronAlarm).toBeGreaterThan(Date.now());
    expect(cronAlarm).toBeLessThanOrEqual(Date.now() + 5 * MINUTE);
    const everyAlarm = (await alarmOf(byEvery)) ?? 0;
    expect(everyAlarm).toBeGreaterThan(Date.now());
    expect(everyAlarm).toBeLessThanOrEqual(Date.now() + 15_000);
    await call('DELETE', `/pollers/${byCron}`);
    await call('DELETE', `/pollers/${byEvery}`);
  });

  it('replaces a config (200) and keeps the checkpoint, the ledger and the dead letters', async () => {
    const name = unique('keep');
    await call('PUT', `/pollers/${name}`, config());
    const checkpoint = Date.now() - 10 * MINUTE;
    await runInDurableObject(objectOf(name), (instance: Poller, state) => {
      writtenBehindTheStore(instance);
      state.storage.sql.exec('UPDATE poller_state SET checkpoint = ?', checkpoint);
      state.storage.sql.exec(
        `INSERT INTO dead_letters (key, kind, id, version, version_ms, record, error, attempts, first_failure, last_failure)
         VALUES ('k', 'delivery', 'x', 'v', 1, '{}', 'HTTP 422', 5, ?, ?)`,
        Date.now(),
        Date.now(),
      );
    });

    const replaced = await call(
      'PUT',
      `/pollers/${name}`,
      config({ labels: { tenant: 'globex' } }),
    );

    expect(replaced.status).toBe(200);
    expect(await replaced.json()).toMatchObject({ version: 2, created: false });
    const status = (await objectOf(name).status()) as { checkpoint: string | null };
    expect(status.checkpoint).toBe(new Date(checkpoint).toISOString());
    expect((await objectOf(name).deadLetters(10)).items).toHaveLength(1);
    const listed = (await (await call('GET', `/pollers?search=${name}`)).json()) as {
      items: { name: string; labels: Record<string, string> }[];
    };
    expect(listed.items).toEqual([expect.objectContaining({ name, labels: { tenant: 'globex' } })]);
    await call('DELETE', `/pollers/${name}`);
  });

  it('a replaced config is what the next run uses, in the same object as before', async () => {
    const name = unique('swap');
    const start_from = new Date(Date.now() - MINUTE).toISOString();
    await call('PUT', `/pollers/${name}`, config({ start_from }));
    upstream.add('before', Date.now() - 30_000);
    await objectOf(name).runNow();
    expect(upstream.requests.at(-1)?.searchParams.get('tenant')).toBeNull();

    await call(
      'PUT',
      `/pollers/${name}`,
      config({ start_from, source: { ...config().source, params: { tenant: 'globex' } } }),
    );
    await objectOf(name).runNow();

    expect(upstream.requests.at(-1)?.searchParams.get('tenant')).toBe('globex');
    expect(receiver.ids()).toEqual(['before']);
    await call('DELETE', `/pollers/${name}`);
  });

  it('answers 400 listing every error (poller, key, expected, given), and 409 for a static poller’s name', async () => {
    const name = unique('bad');
    const bad = await call('PUT', `/pollers/${name}`, {
      ...config(),
      lease_ttl: 900,
      deliver: { type: 'handler', name: 'demo-sessions', batch: 50 },
    });
    expect(bad.status).toBe(400);
    const { errors } = (await bad.json()) as { errors: string[] };
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`poller "${name}": lease_ttl: expected a duration string`),
        `poller "${name}": deliver.batch: unknown key`,
      ]),
    );
    expect((await call('GET', `/pollers/${name}/config`)).status).toBe(404);

    const taken = await call('PUT', '/pollers/seed', config());
    expect(taken.status).toBe(409);
    expect((await call('DELETE', '/pollers/seed')).status).toBe(409);
  });

  it('shows the stored config with secrets as ${NAME}, never their values', async () => {
    const name = unique('shown');
    await call('PUT', `/pollers/${name}`, config({ every: '60s' }));
    const response = await call('GET', `/pollers/${name}/config`, undefined, STATUS_TOKEN);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ kind: 'runtime', config: { every: '60s' } });
    expect(text).toContain('Bearer ${UPSTREAM_TOKEN}');
    expect(text).not.toContain(TEST_SECRETS.UPSTREAM_TOKEN);
    await call('DELETE', `/pollers/${name}`);
  });

  it('lists static and runtime pollers a page at a time, by label and by state', async () => {
    const names = [unique('page'), unique('page'), unique('page')].sort();
    for (const name of names)
      await call('PUT', `/pollers/${name}`, config({ labels: { tier: `a=${names[0]}` } }));
    const label = `tier=a=${names[0]}`;
    const first = (await (
      await call('GET', `/pollers?limit=2&label=${label}`, undefined, STATUS_TOKEN)
    ).json()) as {
      items: { name: string }[];
      next_cursor: string | null;
    };
    expect(first.items.map((item) => item.name)).toEqual(names.slice(0, 2));
    const second = (await (
      await call(
        'GET',
        `/pollers?limit=2&label=${label}&cursor=${first.next_cursor}`,
        undefined,
        STATUS_TOKEN,
      )
    ).json()) as { items: { name: string }[]; next_cursor: string | null };
    expect(second.items.map((item) => item.name)).toEqual(names.slice(2));
    expect(second.next_cursor).toBeNull();

    const all = (await (
      await call('GET', '/pollers?limit=500', undefined, STATUS_TOKEN)
    ).json()) as {
      items: { name: string; kind: string }[];
    };
    expect(all.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'seed', kind: 'static' })]),
    );
    for (const name of names) await call('DELETE', `/pollers/${name}`);
  });

  it('DELETE stops a poller for good, erases its storage, and keeps the deletion in an audit trail', async () => {
    const name = unique('gone');
    await call('PUT', `/pollers/${name}`, config());
    expect(await alarmOf(name)).not.toBeNull();

    const deleted = await call('DELETE', `/pollers/${name}?reason=customer%20left`);

    expect(deleted.status).toBe(200);
    expect(await alarmOf(name)).toBeNull();
    // Every table is empty but for the tombstone of the incarnation (R14) and the fresh
    // state and freshness rows that every object starts with.
    const rows = await runInDurableObject(objectOf(name), (_instance: Poller, state) => {
      const tables = state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%' AND name != '_migrations'",
        )
        .toArray()
        .map((table) => table.name);
      return Object.fromEntries(
        tables.map((table) => [
          table,
          state.storage.sql.exec(`SELECT * FROM ${table}`).toArray().length,
        ]),
      );
    });
    const nonEmpty = Object.entries(rows).filter(([, count]) => count > 0);
    expect(Object.fromEntries(nonEmpty)).toEqual({ meta: 1, poller_state: 1, freshness: 1 });
    expect((await call('POST', `/pollers/${name}/run`)).status).toBe(404);
    const trail = (await (
      await call('GET', '/pollers/deletions', undefined, STATUS_TOKEN)
    ).json()) as {
      deletions: { name: string; reason: string }[];
    };
    expect(trail.deletions).toEqual(
      expect.arrayContaining([expect.objectContaining({ name, reason: 'customer left' })]),
    );
  });
});

describe('create and delete survive a crash between their steps', () => {
  it('a create cut off before the poller’s object got its config is finished by the watchdog', async () => {
    const name = unique('half-made');
    const registry = registryOf(env);
    const text = JSON.stringify(config());
    await registry.beginPut(name, JSON.parse(text), { tenant: 'acme' }, Date.now());
    // … and the Worker died here: the object has no config, nothing runs.
    expect(await alarmOf(name)).toBeNull();

    const report = await watchdog(env, Date.now() + 2 * MINUTE);

    expect(report.repaired).toContain(name);
    expect(await alarmOf(name)).not.toBeNull();
    expect((await registry.get(name))?.phase).toBe('active');
    await call('DELETE', `/pollers/${name}`);
  });

  it('a delete cut off before the object was erased is finished by the watchdog, and recorded', async () => {
    const name = unique('half-gone');
    await call('PUT', `/pollers/${name}`, config());
    const registry = registryOf(env);
    await registry.beginDelete(name, Date.now());
    // … and the Worker died here: the object still has its alarm.
    expect(await alarmOf(name)).not.toBeNull();

    await watchdog(env, Date.now() + 2 * MINUTE);

    expect(await alarmOf(name)).toBeNull();
    expect(await registry.get(name)).toBeNull();
    expect((await registry.deletions(50)).map((entry) => entry.name)).toContain(name);
  });
});

describe('a few hundred pollers end to end', () => {
  it('creates 200 runtime pollers through the API, each ticks on its own alarm and delivers', {
    timeout: 120_000,
  }, async () => {
    const names = Array.from(
      { length: 200 },
      (_, i) => `fleet-${String(i).padStart(3, '0')}-${crypto.randomUUID().slice(0, 4)}`,
    );
    upstream.add('shared', Date.now() - 30_000);
    const start = new Date(Date.now() - MINUTE).toISOString();
    for (let i = 0; i < names.length; i += 20) {
      const replies = await Promise.all(
        names
          .slice(i, i + 20)
          .map((name) =>
            call('PUT', `/pollers/${name}`, { ...config({ every: '60s' }), start_from: start }),
          ),
      );
      expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 201));
    }
    // Every one booked its own tick within its interval.
    for (const name of names) {
      const alarm = (await alarmOf(name)) ?? 0;
      expect(alarm, name).toBeLessThanOrEqual(Date.now() + MINUTE);
    }
    // Each tick comes (made due now rather than waited for) and runs.
    for (let i = 0; i < names.length; i += 20) {
      await Promise.all(
        names.slice(i, i + 20).map(async (name) => {
          await runInDurableObject(objectOf(name), async (instance: Poller, state) => {
            state.storage.sql.exec('UPDATE poller_state SET next_tick_at = ?', Date.now() - 1);
            writtenBehindTheStore(instance);
            await state.storage.setAlarm(Date.now() - 1);
          });
          await runDurableObjectAlarm(objectOf(name));
        }),
      );
    }
    // A poller whose own tick came meanwhile may still be delivering: wait for rest.
    const delivered = () => receiver.deliveries.filter((delivery) => delivery.id === 'shared');
    await vi.waitUntil(() => delivered().length >= names.length, { timeout: 30_000, interval: 50 });
    expect(delivered()).toHaveLength(names.length);
    for (let i = 0; i < names.length; i += 20) {
      await Promise.all(names.slice(i, i + 20).map((name) => call('DELETE', `/pollers/${name}`)));
    }
  });
});
