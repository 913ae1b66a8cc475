import { exports } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { STATIC_INCARNATION } from '../../src/catalog.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

/** An admin API call, as an operator's curl would make it. */
function admin(method: string, path: string, body?: unknown) {
  return exports.default.fetch(`https://tidemark.test${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TEST_SECRETS.ADMIN_TOKEN}`,
      'content-type': 'application/json',
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** The upstream stops listing this version (the record moved on, or was deleted). */
function unlist(update: { id: string; updatedAtMs: number }) {
  const index = upstream.updates.findIndex(
    (u) => u.id === update.id && u.updatedAtMs === update.updatedAtMs,
  );
  upstream.updates.splice(index, 1);
}

describe('moving the checkpoint keeps pending delivery failures', () => {
  it('a backfill retries a failing version the upstream no longer lists, from its stored record, before the newer one', async () => {
    const poller = newPoller('seed');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    const v1 = upstream.add('x', start + MINUTE);
    receiver.fail('x', 500);
    await poller.tick();
    // R19: stored with its record, x@1 no longer holds C back.
    expect((await poller.status()).last_run?.outcome).toBe('partial');
    expect(await poller.checkpoint()).toBeGreaterThan(start + MINUTE);

    // The record moves on: the upstream now lists only its newer version.
    unlist(v1);
    const v2 = upstream.add('x', start + 2 * MINUTE);
    const moved = await poller.stub().moveCheckpoint(STATIC_INCARNATION, {
      at: start - 10 * MINUTE,
      reason: 'receiver restored from a backup',
      force: false,
    });
    expect(moved).toMatchObject({ outcome: 'moved', backfill: true });

    expect(await poller.stub().runNow()).toMatchObject({
      outcome: 'ran',
      run: { outcome: 'success' },
    });
    expect(receiver.deliveries.filter((d) => d.id === 'x').map((d) => d.version)).toEqual([
      v1.updatedAt,
      v2.updatedAt,
    ]);
    expect(await poller.sql('SELECT key FROM delivery_failures')).toEqual([]);
    expect((await poller.status()).dead_letters.count).toBe(0);
  });

  it('a forced move forward keeps a failing version below the new checkpoint until it is dead-lettered', async () => {
    const poller = newPoller('poison'); // max_attempts 3
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    const v1 = upstream.add('x', start + MINUTE);
    receiver.fail('x', 500, 99);
    await poller.tick(); // partial: C moves past x@1, which stays stored as failing (R19)
    unlist(v1);

    const to = ((await poller.checkpoint()) ?? start) + 1;
    const moved = await poller.stub().moveCheckpoint(STATIC_INCARNATION, {
      at: to,
      reason: 'skip an upstream outage',
      force: true,
    });
    expect(moved).toMatchObject({ outcome: 'moved', backfill: false });
    const key = `poison:x:${v1.updatedAt}`;
    expect(await poller.sql('SELECT key, attempts FROM delivery_failures')).toEqual([
      { key, attempts: 1 },
    ]);

    // The runs after the move settle it: retried from its record until max_attempts.
    await poller.stub().runNow();
    for (let retry = 0; retry < 5; retry += 1) {
      if ((await poller.status()).next_wakeup?.reason !== 'retry') break;
      await poller.retryNow();
    }
    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('success');
    expect(await poller.checkpoint()).toBeGreaterThanOrEqual(to);
    expect(status.dead_letters.count).toBe(1);
    const [letter] = (await poller.stub().deadLetters(10)).items;
    expect(letter).toMatchObject({ key, id: 'x', version: v1.updatedAt, record: { id: 'x' } });
    expect(await poller.sql('SELECT key FROM delivery_failures')).toEqual([]);
  });
});

describe('the checkpoint admin input is bounded in time', () => {
  it('refuses times before 1970-01-01 with a 400 that says so, and stores nothing', async () => {
    const poller = newPoller('seed', 'seed');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    for (const at of [
      '0000-01-01T00:00:00Z',
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:30:00+01:00',
    ]) {
      const response = await admin('PUT', '/pollers/seed/checkpoint', { at, reason: 'typo' });
      expect(response.status, at).toBe(400);
      expect(((await response.json()) as { error: string }).error, at).toContain(
        '1970-01-01T00:00:00.000Z',
      );
    }
    expect(await poller.checkpoint()).toBe(start);
    expect((await poller.status()).audit).toEqual([]);

    const epoch = await admin('PUT', '/pollers/seed/checkpoint', {
      at: '1970-01-01T00:00:00Z',
      reason: 'replay everything',
    });
    expect(epoch.status).toBe(200);
    expect((await poller.status()).checkpoint).toBe('1970-01-01T00:00:00.000Z');
  });

  it('refuses a time beyond what a date can render, whatever its spelling', async () => {
    // new Date(x).toISOString() throws past ±8.64e15 ms: no such time may reach storage.
    for (const at of ['+275760-09-13T00:00:00.001Z', '9999-12-31T23:59:59Z']) {
      const response = await admin('PUT', '/pollers/seed/checkpoint', { at, reason: 'typo' });
      expect(response.status, at).toBe(400);
    }
  });
});

describe('a dead-letter replay holds the lease while it delivers', () => {
  /** Dead-letters x@v1 (max_attempts 3, rejected each time), then lists x@v2 upstream. */
  async function deadLetteredThenNewer() {
    const poller = newPoller('poison');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    const v1 = upstream.add('x', start + MINUTE);
    receiver.fail('x', 422, 3);
    await poller.tick();
    await poller.retryNow();
    await poller.retryNow();
    const [letter] = (await poller.stub().deadLetters(10)).items;
    expect(letter).toMatchObject({ id: 'x', version: v1.updatedAt, attempts: 3 });
    // The record moves on: its next version is stamped at the checkpoint, for the next run.
    const v2 = upstream.add('x', (await poller.checkpoint()) ?? 0);
    const replay = () => poller.stub().replayDeadLetter(letter?.key ?? '');
    return { poller, v1, v2, replay };
  }

  it('skips a cron tick that arrives mid-replay, so the newer version goes after the replayed one', async () => {
    const { poller, v1, v2, replay } = await deadLetteredThenNewer();
    const held = receiver.holdNth(1);
    const replaying = replay();
    await held.arrived();

    expect(await poller.trigger('cron')).toMatchObject({
      outcome: 'skipped',
      reason: 'lease_held',
    });
    expect(await poller.stub().runNow()).toMatchObject({
      outcome: 'skipped',
      reason: 'lease_held',
    });
    const [lease] = await poller.sql<{
      lease_held: number;
      lease_phase: string;
      lease_trigger: string;
      lease_expires_at: number;
    }>('SELECT lease_held, lease_phase, lease_trigger, lease_expires_at FROM poller_state');
    expect(lease).toMatchObject({ lease_held: 1, lease_phase: 'running', lease_trigger: 'replay' });
    // A crash mid-replay is recovered at the lease expiry, like a run's.
    expect(await poller.alarmAt()).toBe(lease?.lease_expires_at);

    held.release();
    expect(await replaying).toMatchObject({ outcome: 'delivered' });
    const after = await poller.status();
    expect(after.lease.held).toBe(false);
    expect(after.dead_letters.count).toBe(0);
    expect(await poller.alarmAt()).toBeNull();
    const [manual, cron] = await poller.runs();
    expect(manual).toMatchObject({ outcome: 'skipped', trigger: 'manual' });
    expect(cron).toMatchObject({ outcome: 'skipped', trigger: 'cron' });
    expect(cron?.error).toContain('lease held');

    expect(await poller.tick()).toMatchObject({ outcome: 'started' });
    expect((await poller.status()).last_run).toMatchObject({ outcome: 'success', records: 1 });
    expect(receiver.deliveries.filter((d) => d.id === 'x').map((d) => d.version)).toEqual([
      v1.updatedAt,
      v2.updatedAt,
    ]);
  });

  it('is recovered by the alarm at the lease expiry when the object dies mid-replay', async () => {
    const { poller, v2, replay } = await deadLetteredThenNewer();
    const held = receiver.holdNth(1);
    const replaying = replay().catch((error: unknown) => error);
    await held.arrived();
    await poller.abort();
    await replaying;
    held.release();

    const status = await poller.status();
    expect(status.lease.held).toBe(true);
    expect(status.next_alarm_at).toBe(status.lease.expires_at);
    expect(status.dead_letters.count).toBe(1); // not replayed: still there

    await poller.expireLease();
    await poller.alarm();
    await poller.settle();
    const runs = await poller.runs();
    expect(runs[1]).toMatchObject({ outcome: 'recovered', trigger: 'replay' });
    expect(runs[0]).toMatchObject({ outcome: 'success', trigger: 'recovery' });
    expect((await poller.status()).lease.held).toBe(false);
    expect(receiver.deliveries.at(-1)).toMatchObject({ id: 'x', version: v2.updatedAt });
  });
});
