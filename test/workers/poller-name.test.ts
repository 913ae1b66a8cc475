import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import { api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { writtenBehindTheStore } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

const storedName = (name: string) =>
  runInDurableObject(objectOf(name), (_instance: Poller, state) =>
    state.storage.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = 'name'")
      .toArray()
      .map((row) => row.value),
  );

describe('a poller’s object takes its name from its id', () => {
  it('runs its own tick in its alarm, in a fresh instance, with no name stored', async () => {
    const name = unique('named');
    upstream.add('a', Date.now() - 30_000);
    const start_from = new Date(Date.now() - MINUTE).toISOString();
    expect((await api('PUT', `/pollers/${name}`, { ...runtimeConfig(), start_from })).status).toBe(
      201,
    );
    // Nothing in storage says whose object it is; its tick is due.
    await runInDurableObject(objectOf(name), (instance: Poller, state) => {
      state.storage.sql.exec("DELETE FROM meta WHERE key = 'name'");
      state.storage.sql.exec('UPDATE poller_state SET next_tick_at = ?', Date.now());
      writtenBehindTheStore(instance);
    });
    await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
      state.abort('test: a fresh instance'),
    ).catch(() => {});

    await runDurableObjectAlarm(objectOf(name));

    expect(receiver.ids()).toEqual(['a']);
    expect(await storedName(name)).toEqual([]); // the alarm ran under its id's name
    expect((await objectOf(name).runs(1))[0]).toMatchObject({ outcome: 'success', records: 1 });
    expect((await objectOf(name).status()).name).toBe(name);
    await api('DELETE', `/pollers/${name}`);
  });

  it('an object reached by an id without a name, and none stored, serves no poller', async () => {
    const stub = env.POLLER.get(env.POLLER.newUniqueId());
    await expect(runInDurableObject(stub, (instance: Poller) => instance.status())).rejects.toThrow(
      /idFromName/,
    );
    await runInDurableObject(stub, (_instance: Poller, state) =>
      state.storage.setAlarm(Date.now() + MINUTE),
    );
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.runs(10)).toEqual([]);
  });
});
