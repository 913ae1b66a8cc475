import { runInDurableObject } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import { REPORT_EVERY_MS, REPORT_GRACE_MS, VISIT_AGAIN_MS } from '../../src/registry/heartbeat.ts';
import { OVERDUE_QUERY } from '../../src/registry/overdue.ts';
import { type Registry, registryOf } from '../../src/registry/registry.ts';
import { type Shards, watchdog } from '../../src/watchdog/index.ts';
import { alarmOf, api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { type FakeUpstream, installFakes } from './fakes.ts';
import { disarmStaticPollers, storeOf } from './poller.ts';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** A tick's slice far smaller than the fleet: the round robin takes several ticks to go round. */
const SLICE = 2;
/** A round far longer than any test: the round robin alone moves SLICE pollers a tick. */
const NO_ROUND = 1_000_000;
const sliced: Env = { ...env, WATCHDOG_SLICE: String(SLICE), WATCHDOG_ROUND: String(NO_ROUND) };
const registry = () => registryOf(env);
const inRegistry = <T>(work: (sql: SqlStorage) => T) =>
  runInDurableObject(registry(), (_instance: Registry, state) => work(state.storage.sql));

let upstream: FakeUpstream;

beforeEach(() => {
  ({ upstream } = installFakes());
});

// The watchdog arms every static poller's own ticks: disarmed after each test.
afterEach(disarmStaticPollers);

/** Runtime pollers created through the API, each ticking on its own alarm (every minute). */
async function created(count: number, every = '60s'): Promise<string[]> {
  const prefix = unique('due');
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const name of names) {
    const reply = await api('PUT', `/pollers/${name}`, runtimeConfig({ every }));
    expect(reply.status).toBe(201);
  }
  return names;
}

/** A runtime poller's row in the registry alone (no object): nothing reports over it. */
async function listedOnly(name: string): Promise<void> {
  const begun = await registry().beginPut(name, runtimeConfig(), {}, Date.now());
  if (!begun.ok) throw new Error(`beginPut refused: ${begun.reason}`);
  await registry().activate(name, begun.version, Date.now());
}

const removed = async (names: string[]) => {
  for (const name of names) await api('DELETE', `/pollers/${name}`);
};

/** What the registry holds of a poller's reports. */
const registryRow = async (name: string) =>
  (
    await inRegistry((sql) =>
      sql
        .exec<{ reported_at: number | null; due_at: number | null; checkpoint: number | null }>(
          'SELECT reported_at, due_at, checkpoint FROM pollers WHERE name = ?',
          name,
        )
        .toArray(),
    )
  )[0];

/**
 * Backdates a poller's last report to `at`, as both sides keep it: the poller's memo of what
 * it sent, and the registry's row (reported then, so due REPORT_EVERY + grace later).
 */
async function lastReported(name: string, at: number): Promise<void> {
  await runInDurableObject(objectOf(name), (instance: Poller) => {
    const store = storeOf(instance);
    const last = store.presence.lastReport();
    if (last === null) throw new Error(`${name} never reported`);
    store.presence.setLastReport({ atFault: false, ...last, at });
  });
  await inRegistry((sql) =>
    sql.exec(
      'UPDATE pollers SET reported_at = ?, due_at = ? WHERE name = ?',
      at,
      at + REPORT_EVERY_MS + REPORT_GRACE_MS,
      name,
    ),
  );
}

/** What the platform does when it loses an alarm. */
const loseAlarm = (name: string) =>
  runInDurableObject(objectOf(name), (_instance: Poller, state) => state.storage.deleteAlarm());

/** The round robin's next tick starts right after `name`: it is the last its cycle reaches. */
const roundRobinAfter = (name: string) =>
  inRegistry((sql) =>
    sql.exec(
      "INSERT INTO registry_meta (key, value) VALUES ('watchdog_after', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      name,
    ),
  );

describe('a lost alarm is found by its silence, at any fleet size', () => {
  it('a runtime poller that went silent past its due time gets its lost alarm back at the next tick, however far the round robin is from it', {
    timeout: 30_000,
  }, async () => {
    const names = await created(3 * SLICE);
    const lost = names[0] ?? '';
    await loseAlarm(lost);

    // Not overdue yet (it reported when created): the round robin, starting after it, does
    // not reach it in this tick, so its alarm stays lost.
    await roundRobinAfter(lost);
    const before = await watchdog(sliced);
    expect(before.overdue).toBe(0);
    expect(before.repaired).not.toContain(lost);
    expect(await alarmOf(lost)).toBeNull();

    // It last reported REPORT_EVERY and 5 minutes ago, and has been silent since: overdue.
    const reportedAt = Date.now() - REPORT_EVERY_MS - 5 * MINUTE;
    await lastReported(lost, reportedAt);
    await roundRobinAfter(lost);
    const report = await watchdog(sliced);

    expect(report.overdue).toBe(1);
    expect(report.repaired).toContain(lost);
    expect(await alarmOf(lost)).not.toBeNull();
    // The visit's report (a heartbeat: past REPORT_EVERY since the last) renews its due time,
    // so the next tick does not visit it again.
    const row = await registryRow(lost);
    expect(row?.reported_at).toBeGreaterThan(reportedAt + REPORT_EVERY_MS);
    expect(row?.due_at).toBeGreaterThan(Date.now() + REPORT_EVERY_MS);
    expect((await watchdog(sliced)).overdue).toBe(0);
    await removed(names);
  });
});

describe('the round: every runtime poller visited within WATCHDOG_ROUND ticks', () => {
  it('gives every lost alarm back within the round, however small the slice', {
    timeout: 30_000,
  }, async () => {
    const names = await created(5 * SLICE);
    for (const name of names) await loseAlarm(name);
    // A round of 2 ticks over a slice of 2: the slice alone would take 5 ticks.
    const round: Env = { ...env, WATCHDOG_SLICE: String(SLICE), WATCHDOG_ROUND: '2' };
    await watchdog(round);
    await watchdog(round);
    const lost = [];
    for (const name of names) if ((await alarmOf(name)) === null) lost.push(name);
    expect(lost).toEqual([]);
    await removed(names);
  });

  it('visits a large share in groups, each in a WatchdogShard invocation of its own', {
    timeout: 30_000,
  }, async () => {
    const names = await created(6);
    for (const name of names) await loseAlarm(name);
    const everyTick: Env = { ...env, WATCHDOG_ROUND: '1', WATCHDOG_GROUP: '2' };
    const shards = exports.WatchdogShard as unknown as Shards;
    const report = await watchdog(everyTick, Date.now(), shards);
    expect(report.shards).toBeGreaterThanOrEqual(3);
    expect(report.failed).toEqual([]);
    for (const name of names) expect(report.repaired).toContain(name);
    for (const name of names) expect(await alarmOf(name)).not.toBeNull();
    await removed(names);
  });
});

describe('the round within what one tick can visit', () => {
  it('without WatchdogShard, visits at most WATCHDOG_GROUP a tick, and moves on no further', {
    timeout: 30_000,
  }, async () => {
    const names = await created(6);
    for (const name of names) await loseAlarm(name);
    const alone: Env = { ...env, WATCHDOG_ROUND: '1', WATCHDOG_GROUP: '2' };
    const repaired = new Set<string>();
    for (let tick = 1; tick <= 3; tick += 1) {
      const report = await watchdog(alone);
      const ours = report.repaired.filter((name) => names.includes(name));
      expect(ours.length, `tick ${tick}`).toBeLessThanOrEqual(2);
      for (const name of ours) repaired.add(name);
    }
    // Three ticks of two went round the six, each once: none was passed over.
    expect([...repaired].sort()).toEqual([...names].sort());
    await removed(names);
  });

  it('makes a group whose WatchdogShard call failed overdue: the next tick visits it first', {
    timeout: 30_000,
  }, async () => {
    const names = await created(4);
    for (const name of names) await loseAlarm(name);
    const grouped: Env = { ...env, WATCHDOG_ROUND: '1', WATCHDOG_GROUP: '2' };
    const down: Shards = {
      visit: async () => {
        throw new Error('the shard invocation failed');
      },
    };
    const failed = await watchdog(grouped, Date.now(), down);
    expect(failed.failed).toEqual(expect.arrayContaining(names));
    // The next tick, even with its round elsewhere, takes them from the overdue queue.
    const next = await watchdog({ ...env, WATCHDOG_ROUND: String(NO_ROUND) });
    expect(next.overdue).toBeGreaterThanOrEqual(names.length);
    for (const name of names) expect(await alarmOf(name), name).not.toBeNull();
    await removed(names);
  });
});

describe('a visit costs a request, never a row', () => {
  it('writes no row in the object or the registry, for an idle poller and for one in a run', {
    timeout: 30_000,
  }, async () => {
    // Hourly: its own tick, a run that writes rows and reports, does not land between the steps.
    const [name = ''] = await created(1, '1h');
    const object = objectOf(name);
    const writes = async () => {
      const stats = await object.storageStats();
      return { rows: stats.rowsWritten, alarms: stats.alarmWrites };
    };
    const idleBefore = await writes();
    const reportedBefore = (await registryRow(name))?.reported_at;
    await object.ensureScheduled(null);
    expect(await writes()).toEqual(idleBefore);
    expect((await registryRow(name))?.reported_at).toBe(reportedBefore);

    // A run waits on a slow upstream: a visit meanwhile must not report it as running.
    upstream.delayMs = 400;
    const run = object.runNow();
    await vi.waitUntil(async () => (await object.status()).lease.held, {
      timeout: 5_000,
      interval: 10,
    });
    await object.ensureScheduled(null);
    expect((await registryRow(name))?.reported_at).toBe(reportedBefore);
    upstream.delayMs = 0;
    await run;
    await removed([name]);
  });
});

describe('reports are heartbeats', () => {
  it('a poller whose checkpoint does not move reports again once REPORT_EVERY has passed, and renews its due time', async () => {
    // Hourly: no tick of its own comes between the steps below and reports by itself.
    const [name = ''] = await created(1, '1h');
    const checkpoint = (await registryRow(name))?.checkpoint;

    // Reported a minute ago, nothing changed since: a visit sends nothing.
    const recently = Date.now() - MINUTE;
    await lastReported(name, recently);
    await objectOf(name).ensureScheduled();
    expect((await registryRow(name))?.reported_at).toBe(recently);

    // Reported REPORT_EVERY ago, nothing changed since: it reports all the same.
    const long = Date.now() - REPORT_EVERY_MS - 1_000;
    await lastReported(name, long);
    const visited = Date.now();
    await objectOf(name).ensureScheduled();
    const row = await registryRow(name);
    expect(row?.checkpoint).toBe(checkpoint);
    expect(row?.reported_at).toBeGreaterThanOrEqual(visited);
    // Due at its first own tick once its next heartbeat is due, and a grace after that.
    expect(row?.due_at).toBeGreaterThanOrEqual(visited + REPORT_EVERY_MS + REPORT_GRACE_MS);
    expect(row?.due_at).toBeLessThanOrEqual(
      Date.now() + REPORT_EVERY_MS + 60 * MINUTE + REPORT_GRACE_MS,
    );
    await removed([name]);
  });
});

describe('the overdue queue', () => {
  it('hands out at most a slice of overdue runtime pollers, the most overdue first, each once until it is due again', async () => {
    const prefix = unique('queue');
    const [a, b, c] = [`${prefix}-a`, `${prefix}-b`, `${prefix}-c`];
    const now = Date.now();
    // As their last reports said: each due a few minutes ago.
    const summary = { state: 'ok', checkpoint: null, deadLetters: 0, atFault: false, reason: null };
    for (const [name, dueAt] of [
      [a, now - 5 * MINUTE],
      [b, now - MINUTE],
      [c, now - 3 * MINUTE],
    ] as const) {
      await listedOnly(name);
      await registry().report(name, { ...summary, dueAt }, now - 20 * MINUTE);
    }
    const [paused = ''] = await created(1);
    // Paused, a poller expects no run: it reports no due time, and is never overdue.
    expect((await api('POST', `/pollers/${paused}/pause`, { reason: 'test' })).status).toBe(200);
    expect((await registryRow(paused))?.due_at).toBeNull();

    const first = await registry().watchdogSlice(SLICE, MINUTE, now, NO_ROUND);
    expect(first.overdue.map((entry) => entry.name)).toEqual([a, c]);
    // Visited once: the round robin's share leaves out what is overdue.
    const slice = first.slice.map((entry) => entry.name);
    expect(slice).not.toContain(a);
    expect(slice).not.toContain(c);

    // Handed out, a and c are not overdue again until VISIT_AGAIN has passed with no report.
    const second = await registry().watchdogSlice(SLICE, MINUTE, now, NO_ROUND);
    expect(second.overdue.map((entry) => entry.name)).toEqual([b]);
    const later = await registry().watchdogSlice(100, MINUTE, now + VISIT_AGAIN_MS + 1, NO_ROUND);
    expect(later.overdue.map((entry) => entry.name)).toEqual(expect.arrayContaining([a, b, c]));

    const muchLater = await registry().watchdogSlice(1_000, MINUTE, now + DAY, NO_ROUND);
    expect(muchLater.overdue.map((entry) => entry.name)).not.toContain(paused);
    await removed([a, b, c, paused]);
  });

  it('reads the overdue pollers through their index, not the whole table', async () => {
    const plan = await inRegistry((sql) =>
      sql
        .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${OVERDUE_QUERY}`, Date.now(), SLICE)
        .toArray()
        .map((step) => step.detail)
        .join('\n'),
    );
    expect(plan).toContain('USING INDEX pollers_overdue');
    expect(plan).not.toContain('TEMP B-TREE'); // no sort: the index is in due order
  });
});
