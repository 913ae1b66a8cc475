import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { app } from '../../src/http/app.ts';
import worker from '../../src/index.ts';
import type { Poller } from '../../src/poller/durable-object.ts';
import { registryOf } from '../../src/registry/registry.ts';
import { api, objectOf, runtimeConfig, setSecret, unique } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { registryProxy } from '../support/registry-proxy.ts';
import { installFakes } from './fakes.ts';
import { writtenBehindTheStore } from './poller.ts';

const MINUTE = 60_000;

beforeEach(() => {
  installFakes();
});

const put = (name: string, body: unknown) => api('PUT', `/pollers/${name}`, body);
const remove = (name: string) => api('DELETE', `/pollers/${name}`);

/**
 * The Worker's env whose registry, once its first call has answered, runs `meanwhile` before
 * its caller sees the answer: a route's (or the queue consumer's) lookup of the poller, then
 * a DELETE, forced as an interleaving.
 */
function afterTheLookup(meanwhile: () => Promise<void>): Env {
  let done = false;
  return registryProxy(async (_method, call) => {
    const answer = await call();
    if (!done) {
      done = true;
      await meanwhile();
    }
    return answer;
  });
}

/** Every row of every table of a poller's object, and its alarm: all it keeps. */
const everything = (name: string) =>
  runInDurableObject(objectOf(name), async (_instance: Poller, state) => {
    const tables = state.storage.sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name",
      )
      .toArray()
      .map((table) => table.name);
    const rows = Object.fromEntries(
      tables.map((table) => [table, state.storage.sql.exec(`SELECT * FROM "${table}"`).toArray()]),
    );
    return { rows, alarm: await state.storage.getAlarm() };
  });

/** An admin write, as the route that makes it is called. */
interface Write {
  method: string;
  path: (name: string) => string;
  body?: string;
  contentType?: string;
}

const pause: Write = { method: 'POST', path: (n) => `/pollers/${n}/pause` };
const resume: Write = { method: 'POST', path: (n) => `/pollers/${n}/resume` };
const checkpoint: Write = {
  method: 'PUT',
  path: (n) => `/pollers/${n}/checkpoint`,
  body: JSON.stringify({ at: '2020-01-01T00:00:00Z', reason: 'backfill' }),
};
const setToken: Write = {
  method: 'PUT',
  path: (n) => `/pollers/${n}/secrets/CUSTOMER_TOKEN`,
  body: 'the-deleted-tenants-token',
  contentType: 'text/plain',
};
const unsetToken: Write = { method: 'DELETE', path: (n) => `/pollers/${n}/secrets/CUSTOMER_TOKEN` };
const discard: Write = {
  method: 'DELETE',
  path: (n) => `/pollers/${n}/dead-letters/${encodeURIComponent(deadLetterKey(n))}`,
  body: JSON.stringify({ reason: 'handled by hand' }),
};

function send(write: Write, name: string, on: Env) {
  return app.request(
    write.path(name),
    {
      method: write.method,
      headers: {
        authorization: `Bearer ${TEST_SECRETS.ADMIN_TOKEN}`,
        'content-type': write.contentType ?? 'application/json',
      },
      ...(write.body === undefined ? {} : { body: write.body }),
    },
    on,
  );
}

const deadLetterKey = (name: string) => `${name}:r1:2026-11-01T00:00:00.000Z`;

/** A queue message of `name`'s incarnation, as the deliveries' queue carries it. */
const message = (name: string, incarnation: number) => ({
  id: 'm-r1',
  timestamp: new Date(),
  attempts: 3,
  body: {
    poller: name,
    incarnation,
    id: 'r1',
    version: '2026-11-01T00:00:00.000Z',
    idempotency_key: deadLetterKey(name),
    record: { id: 'r1' },
  },
});

/** Hands messages to the dead-letter queue's consumer, on `on`; what it acked and retried. */
async function consume(messages: ReturnType<typeof message>[], on: Env) {
  const batch = createMessageBatch('tidemark-deliveries-dlq', messages);
  const ctx = createExecutionContext();
  await worker.queue(batch, on, ctx);
  return getQueueResult(batch, ctx);
}

async function incarnationOf(name: string): Promise<number> {
  const row = await registryOf(env).get(name);
  if (row === null) throw new Error(`no poller "${name}"`);
  return row.incarnation;
}

const config = () => runtimeConfig({}, { token: 'CUSTOMER_TOKEN' });

describe('an admin write never crosses incarnations (R14)', () => {
  it.each([
    ['pause', pause],
    ['resume', resume],
    ['a checkpoint move', checkpoint],
    ['a secret set', setToken],
  ])(
    '%s that reaches the object after DELETE answers 404 and the tombstone stays as DELETE left it',
    async (_what, write) => {
      const name = unique('erased-write');
      await put(name, config());
      let tombstone: unknown;
      const racing = afterTheLookup(async () => {
        expect((await remove(name)).status).toBe(200);
        tombstone = await everything(name);
      });

      const reply = await send(write, name, racing);

      expect(reply.status).toBe(404);
      expect(await reply.text()).toContain(name);
      expect(await everything(name)).toEqual(tombstone);
    },
  );

  it.each([
    ['pause', pause],
    ['resume', resume],
    ['a checkpoint move', checkpoint],
    ['a secret set', setToken],
    ['a secret unset', unsetToken],
    ['a dead letter discarded', discard],
  ])(
    '%s meant for a deleted poller answers 409 and leaves the poller created again under its name as it was',
    async (_what, write) => {
      const name = unique('reborn-write');
      await put(name, config());
      let successor: unknown;
      const racing = afterTheLookup(async () => {
        expect((await remove(name)).status).toBe(200);
        expect((await put(name, config())).status).toBe(201);
        // The new tenant's own secret, and a dead letter whose key the old one's would match.
        await setSecret(name, 'CUSTOMER_TOKEN', 'the-new-tenants-token');
        const kept = await consume([message(name, await incarnationOf(name))], env);
        expect(kept.explicitAcks).toEqual(['m-r1']);
        successor = await everything(name);
      });

      const reply = await send(write, name, racing);

      expect(reply.status).toBe(409);
      expect(await reply.text()).toContain('deleted');
      expect(await everything(name)).toEqual(successor);
      await remove(name);
    },
  );

  it("keeps no dead letter from the dead-letter queue in an object erased after the consumer's lookup", async () => {
    const name = unique('dlq-race');
    await put(name, config());
    const incarnation = await incarnationOf(name);
    let tombstone: unknown;
    const racing = afterTheLookup(async () => {
      expect((await remove(name)).status).toBe(200);
      tombstone = await everything(name);
    });
    const result = await consume([message(name, incarnation)], racing);

    expect(result.explicitAcks).toEqual(['m-r1']);
    expect(await everything(name)).toEqual(tombstone);
  });

  it('a poller created again starts from empty tables, whatever reached the tombstone of its name', async () => {
    const name = unique('clean-slate');
    await put(name, config());
    await remove(name);
    // What an object that let writes in after its erase could hold: a pause, a checkpoint, a
    // secret of the deleted tenant, a dead letter, an audit line.
    await runInDurableObject(objectOf(name), (instance: Poller, state) => {
      const sql = state.storage.sql;
      sql.exec('UPDATE poller_state SET paused = 1, checkpoint = ?', Date.now() - MINUTE);
      sql.exec(
        "INSERT INTO poller_secrets (name, ciphertext, iv, key_id, set_at) VALUES ('CUSTOMER_TOKEN', 'x', 'y', 'z', 1)",
      );
      sql.exec(
        "INSERT INTO dead_letters (key, kind, id, version, version_ms, record, error, attempts, first_failure, last_failure) VALUES ('k', 'delivery', 'r1', 'v', 1, '{}', 'e', 3, 1, 1)",
      );
      sql.exec("INSERT INTO audit_log (at, action, detail) VALUES (1, 'poller.paused', '{}')");
      writtenBehindTheStore(instance);
    });

    expect((await put(name, config())).status).toBe(201);

    const status = (await (await api('GET', `/status/${name}`)).json()) as {
      paused: boolean;
      checkpoint: string | null;
      dead_letters: { count: number };
    };
    expect(status).toMatchObject({ paused: false, checkpoint: null, dead_letters: { count: 0 } });
    const secrets = (await (await api('GET', `/pollers/${name}/secrets`)).json()) as {
      secrets: unknown[];
    };
    expect(secrets.secrets).toEqual([]);
    const audit = await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
      state.storage.sql
        .exec<{ action: string }>('SELECT action FROM audit_log')
        .toArray()
        .map((row) => row.action),
    );
    expect(audit).toEqual(['config.created']);
    await remove(name);
  });
});

describe('a static poller declared under the name of a deleted runtime poller (R14)', () => {
  /** `name`'s object as a deleted runtime poller's leaves it: a tombstone of its incarnation. */
  async function tombstoneOf(name: string): Promise<void> {
    const object = objectOf(name);
    const incarnation = 1_000_000 + Math.floor(Math.random() * 1_000_000);
    await object.configure(JSON.stringify(runtimeConfig()), 1, incarnation);
    await object.erase(incarnation);
  }

  /** Runs the object's alarm until a run is in its history, or fails after `limit` tries. */
  async function firstRun(name: string, limit = 200) {
    for (let tries = 0; tries < limit; tries += 1) {
      const [run] = await objectOf(name).runs(1);
      if (run !== undefined) return run;
      await runDurableObjectAlarm(objectOf(name));
    }
    throw new Error(`no run of "${name}" after ${limit} alarms`);
  }

  it('runs by its alarm, and its run ends and lets the lease go', async () => {
    const name = 'crowded'; // a static test poller, whose object these tests give a tombstone
    await tombstoneOf(name);

    expect(await objectOf(name).trigger('cron')).toMatchObject({ outcome: 'started' });

    expect(await firstRun(name)).toMatchObject({ trigger: 'cron', outcome: 'success' });
    expect((await objectOf(name).status()).lease.held).toBe(false);
    await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
      state.storage.deleteAlarm(),
    );
  });

  it('starts from a clean state after a deploy, whatever reached the tombstone before', async () => {
    const name = 'one_attempt';
    await tombstoneOf(name);
    await runInDurableObject(objectOf(name), (instance: Poller, state) => {
      // Erased under a deploy that did not declare the name: a tombstone only.
      state.storage.sql.exec("DELETE FROM meta WHERE key = 'incarnation'");
      // Written into the tombstone by an object that let writes in after its erase.
      state.storage.sql.exec('UPDATE poller_state SET paused = 1, checkpoint = ?', 1_000);
      writtenBehindTheStore(instance);
    });
    // The deploy that declares the static poller starts the object anew.
    await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
      state.abort('test: a deploy'),
    ).catch(() => {});

    const status = await objectOf(name).status();

    expect(status).toMatchObject({ paused: false, checkpoint: null });
    expect(await objectOf(name).trigger('cron')).toMatchObject({ outcome: 'started' });
    expect(await firstRun(name)).toMatchObject({ trigger: 'cron', outcome: 'success' });
    await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
      state.storage.deleteAlarm(),
    );
  });
});
