import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import worker from '../../src/index.ts';
import type { Poller } from '../../src/poller/durable-object.ts';
import { registryOf } from '../../src/registry/registry.ts';
import { watchdog } from '../../src/watchdog/index.ts';
import { alarmOf, api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { registryThen } from '../support/interleave.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { app, handlers } from '../support/worker.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { writtenBehindTheStore } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

const put = (name: string, body: unknown) => api('PUT', `/pollers/${name}`, body);
const remove = (name: string) => api('DELETE', `/pollers/${name}`);
const since = (ms: number) => new Date(Date.now() - ms).toISOString();

/** What a poller's object keeps in storage of the poller itself (not the tables' shapes). */
const kept = (name: string) =>
  runInDurableObject(objectOf(name), async (_instance: Poller, state) => ({
    meta: state.storage.sql
      .exec<{ key: string; value: string }>('SELECT key, value FROM meta ORDER BY key')
      .toArray()
      .map((row) => row.key),
    secrets: state.storage.sql.exec('SELECT name FROM poller_secrets').toArray().length,
    runs: state.storage.sql.exec('SELECT 1 FROM runs').toArray().length,
    checkpoint: state.storage.sql
      .exec<{ checkpoint: number | null }>('SELECT checkpoint FROM poller_state')
      .one().checkpoint,
    alarm: await state.storage.getAlarm(),
  }));

describe('a name deleted and created again (R14)', () => {
  it('a run of the deleted poller delivers and commits nothing into its successor, whose backfill is asked for', async () => {
    const name = unique('reborn');
    upstream.add('recent', Date.now() - 5 * MINUTE);
    upstream.add('ancient', Date.now() - 90 * MINUTE);
    await put(name, { ...runtimeConfig(), start_from: since(10 * MINUTE) });

    // The deleted poller's run waits on its first page…
    const first = upstream.holdNext();
    const doomed = objectOf(name).runNow();
    await first.arrived();
    expect((await remove(name)).status).toBe(200);
    const deliveredAtDelete = receiver.deliveries.length;

    // …while the poller created again under its name starts its own first run.
    await put(name, { ...runtimeConfig(), start_from: since(2 * 60 * MINUTE) });
    const second = upstream.holdNext();
    const reborn = objectOf(name).runNow();
    await second.arrived();
    first.release();
    const old = await doomed;
    expect(receiver.deliveries.length).toBe(deliveredAtDelete);
    expect(old).toMatchObject({ outcome: 'ran', run: { outcome: 'fenced' } });

    second.release();
    const run = await reborn;
    expect(run).toMatchObject({ outcome: 'ran', run: { outcome: 'success', records: 2 } });
    expect(receiver.ids().sort()).toEqual(['ancient', 'recent']);
    await remove(name);
  });

  it('every epoch of the name is new: the first run after a re-create takes one above the last', async () => {
    const name = unique('epochs');
    await put(name, runtimeConfig());
    await objectOf(name).runNow();
    await objectOf(name).runNow();
    await remove(name);
    await put(name, runtimeConfig());
    await objectOf(name).runNow();
    const runs = await objectOf(name).runs(10);
    expect(runs.map((run) => run.epoch)).toEqual([3]);
    await remove(name);
  });

  it('a name created again while its object is warm answers 201 and is active', async () => {
    const name = unique('warm');
    await put(name, runtimeConfig());
    await objectOf(name).status(); // warm
    await remove(name);

    const again = await put(name, runtimeConfig());

    expect(again.status).toBe(201);
    expect((await registryOf(env).get(name))?.phase).toBe('active');
    expect((await api('GET', `/status/${name}`)).status).toBe(200);
    // It ticks by itself: its alarm knows whose it is.
    await runInDurableObject(objectOf(name), async (instance: Poller, state) => {
      state.storage.sql.exec('UPDATE poller_state SET next_tick_at = ?', Date.now() - 1);
      writtenBehindTheStore(instance);
      await state.storage.setAlarm(Date.now() - 1);
    });
    // An alarm set in the past fires by itself too: when the platform got there first, this
    // finds none to run while that run is still going, so the test waits for its record.
    await runDurableObjectAlarm(objectOf(name));
    const [run] = await vi.waitUntil(
      async () => {
        const runs = await objectOf(name).runs(1);
        return runs.length > 0 ? runs : null;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(run?.trigger).toBe('cron');
    await remove(name);
  });

  it("a poller created again runs without the deleted poller's secrets, and its NUDGE_TOKEN no longer works", async () => {
    const name = unique('amnesia');
    const config = runtimeConfig({}, { token: 'CUSTOMER_TOKEN' });
    await put(name, config);
    const secret = (key: string, value: string) =>
      api('PUT', `/pollers/${name}/secrets/${key}`, value, { contentType: 'text/plain' });
    await secret('CUSTOMER_TOKEN', 'customer-token-of-the-first-life');
    const nudgeToken = 'nudge-token-of-the-first-life-0123';
    await secret('NUDGE_TOKEN', nudgeToken);
    const nudge = () =>
      api('POST', `/pollers/${name}/nudge?token=${nudgeToken}`, undefined, { token: '' });
    expect((await objectOf(name).runNow()).outcome).toBe('ran');
    expect((await nudge()).status).toBe(202);
    await remove(name);

    await put(name, config);

    const reply = await objectOf(name).runNow();
    expect(reply.outcome).toBe('misconfigured');
    expect(JSON.stringify(reply)).toContain('CUSTOMER_TOKEN');
    expect((await nudge()).status).toBe(401);
    await remove(name);
  });

  it('DELETE leaves only a tombstone: no config, secrets, runs, checkpoint or alarm', async () => {
    const name = unique('tomb');
    upstream.add('x', Date.now() - 30_000);
    await put(name, { ...runtimeConfig(), start_from: since(MINUTE) });
    await api('PUT', `/pollers/${name}/secrets/EXTRA`, 'v', { contentType: 'text/plain' });
    await objectOf(name).runNow();
    await remove(name);
    expect(await kept(name)).toEqual({
      meta: ['erased_incarnation'],
      secrets: 0,
      runs: 0,
      checkpoint: null,
      alarm: null,
    });
  });
});

describe('no visit or push resurrects a deleted poller (R14)', () => {
  it('a DELETE between the watchdog reading its slice and visiting the poller leaves no ghost', async () => {
    const name = unique('ghost');
    await put(name, runtimeConfig());
    // The object runs an older version than the registry's: the visit would push a config.
    await registryOf(env).beginPut(name, runtimeConfig(), {}, Date.now());
    const racing = registryThen('watchdogSlice', async () => {
      expect((await remove(name)).status).toBe(200);
    });

    await watchdog(racing, Date.now());

    expect(await kept(name)).toMatchObject({ meta: ['erased_incarnation'], alarm: null });
    expect(await registryOf(env).get(name)).toBeNull();
    expect((await remove(name)).status).toBe(404);
  });

  it('a push that lost its race with DELETE is refused by the erased object', async () => {
    const name = unique('late-push');
    await put(name, runtimeConfig());
    const issued = await registryOf(env).issued(name);
    await remove(name);
    if (issued === null) throw new Error('no config issued');

    const reply = await objectOf(name).configure(
      issued.config,
      issued.version + 1,
      issued.incarnation,
    );

    expect(reply).toMatchObject({ ok: false, refused: 'erased' });
    expect(await kept(name)).toMatchObject({ meta: ['erased_incarnation'], alarm: null });
  });

  it('a PUT whose push comes after a DELETE answers 409 and leaves nothing running', async () => {
    const name = unique('put-vs-delete');
    await put(name, runtimeConfig());
    const racing = registryThen('beginPut', async () => {
      expect((await remove(name)).status).toBe(200);
    });

    const replaced = await app.request(
      `/pollers/${name}`,
      {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${TEST_SECRETS.ADMIN_TOKEN}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify(runtimeConfig({ every: '30s' })),
      },
      racing,
    );

    expect(replaced.status).toBe(409);
    expect(await kept(name)).toMatchObject({ meta: ['erased_incarnation'], alarm: null });
    expect(await registryOf(env).get(name)).toBeNull();
  });

  it('the repair of a stuck create that races a DELETE does not bring the poller back', async () => {
    const name = unique('stuck-vs-delete');
    await registryOf(env).beginPut(name, runtimeConfig(), {}, Date.now());
    const racing = registryThen('watchdogSlice', async () => {
      expect((await remove(name)).status).toBe(200);
    });

    const report = await watchdog(racing, Date.now() + 2 * MINUTE);

    expect(report.failed).not.toContain(name);
    expect(report.repaired).not.toContain(name);
    expect(await alarmOf(name)).toBeNull();
    expect(await registryOf(env).get(name)).toBeNull();
  });
});

describe('a replace that cannot run', () => {
  it('keeps the alarm of the run that holds the lease: its crash recovery', async () => {
    const name = unique('keep-lease');
    upstream.add('y', Date.now() - 30_000);
    await put(name, { ...runtimeConfig(), start_from: since(MINUTE) });
    const held = upstream.holdNext();
    const running = objectOf(name).runNow();
    await held.arrived();

    const replaced = await put(name, runtimeConfig({}, { token: 'NOT_SET_YET' }));

    expect(await replaced.json()).toMatchObject({ unset_secrets: ['NOT_SET_YET'] });
    expect(await alarmOf(name)).not.toBeNull();
    held.release();
    await running;
    await remove(name);
  });
});

describe('poller names the fleet routes take', () => {
  it('refuses to create a poller named "deletions" (400): GET /pollers/deletions is the trail', async () => {
    const reply = await put('deletions', runtimeConfig());
    expect(reply.status).toBe(400);
    expect(await reply.text()).toContain('is a route');
  });
});

describe('the queue consumer finds runtime pollers through the catalog', () => {
  const original = handlers['demo-sessions'];
  const handled: string[] = [];
  beforeEach(() => {
    handled.length = 0;
    handlers['demo-sessions'] = async (_record, context) => {
      handled.push(`${context.poller}:${context.id}`);
    };
  });
  afterEach(() => {
    if (original) handlers['demo-sessions'] = original;
  });

  /** A runtime poller delivering to the queue, as the registry issues it. */
  async function queuedPoller(name: string) {
    const config = runtimeConfig({
      deliver: { type: 'queue', binding: 'DELIVERY_QUEUE', name: 'demo-sessions' },
    });
    const registry = registryOf(env);
    const begun = await registry.beginPut(name, config, {}, Date.now());
    if (!begun.ok) throw new Error('not created');
    await registry.activate(name, begun.version, Date.now());
    return begun.incarnation;
  }

  const message = (poller: string, id: string, incarnation?: number) => ({
    id: `m-${id}`,
    timestamp: new Date(),
    attempts: 1,
    body: {
      poller,
      ...(incarnation === undefined ? {} : { incarnation }),
      id,
      version: '2026-11-01T00:00:00.000Z',
      idempotency_key: `${poller}:${id}:2026-11-01T00:00:00.000Z`,
      record: { id },
    },
  });

  /** A deploy whose FLEET_POLICY lets runtime pollers deliver through the queue. */
  const queueing = {
    ...env,
    FLEET_POLICY: JSON.stringify({
      env: ['UPSTREAM_TOKEN', 'WEBHOOK_SECRET'],
      bindings: ['DELIVERY_QUEUE'],
      handlers: ['demo-sessions'],
    }),
  };

  async function consume(
    queue: string,
    messages: ReturnType<typeof message>[],
    on: Env = queueing,
  ) {
    const batch = createMessageBatch(queue, messages);
    const ctx = createExecutionContext();
    await worker.queue(batch, on, ctx);
    return getQueueResult(batch, ctx);
  }

  it("runs a runtime poller's handler for its messages", async () => {
    const name = unique('queued');
    const incarnation = await queuedPoller(name);

    const result = await consume('tidemark-deliveries', [message(name, 'r1', incarnation)]);

    expect(result.explicitAcks).toEqual(['m-r1']);
    expect(handled).toEqual([`${name}:r1`]);
  });

  it('runs no handler the FLEET_POLICY stopped listing: the message waits (retried)', async () => {
    const name = unique('queued-tightened');
    const incarnation = await queuedPoller(name);

    const result = await consume('tidemark-deliveries', [message(name, 'r2', incarnation)], env);

    expect(result.retryMessages.map((retried) => retried.msgId)).toEqual(['m-r2']);
    expect(handled).toEqual([]);
  });

  it('drops what a deleted incarnation sent, even once the name was created again', async () => {
    const name = unique('queued-again');
    const first = await queuedPoller(name);
    await remove(name);
    const gone = await consume('tidemark-deliveries', [message(name, 'orphan', first)]);
    const second = await queuedPoller(name);

    const result = await consume('tidemark-deliveries', [
      message(name, 'stale', first),
      message(name, 'fresh', second),
    ]);

    expect(gone.explicitAcks).toEqual(['m-orphan']);
    expect(result.explicitAcks.sort()).toEqual(['m-fresh', 'm-stale']);
    expect(handled).toEqual([`${name}:fresh`]);
  });

  it('keeps no dead letter in the object of a deleted poller', async () => {
    const name = unique('dlq-gone');
    const incarnation = await queuedPoller(name);
    await remove(name);

    const result = await consume('tidemark-deliveries-dlq', [message(name, 'late', incarnation)]);

    expect(result.explicitAcks).toEqual(['m-late']);
    expect(await kept(name)).toMatchObject({ meta: ['erased_incarnation'] });
    const letters = await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
      state.storage.sql.exec('SELECT key FROM dead_letters').toArray(),
    );
    expect(letters).toEqual([]);
  });
});
