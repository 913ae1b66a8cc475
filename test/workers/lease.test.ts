import { beforeEach, describe, expect, it } from 'vitest';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

describe('R4: one run at a time', () => {
  it('skips and counts triggers that arrive while a run holds the lease; only one run touches the upstream', async () => {
    const poller = newPoller('seed');
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.add('a', Date.now() - 30_000);
    const held = upstream.holdNext();

    expect((await poller.trigger()).outcome).toBe('started');
    const run = poller.alarm();
    await held.arrived(); // the run is awaiting the upstream: the object lets other calls in
    const replies = [
      await poller.trigger(),
      await poller.trigger('manual'),
      await poller.trigger(),
    ];
    held.release();
    await run;
    await poller.settle();

    expect(replies.map((r) => r.outcome)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(replies.every((r) => r.outcome === 'skipped' && r.reason === 'lease_held')).toBe(true);
    expect(upstream.requests.length).toBe(1);
    const status = await poller.status();
    expect(status.counters.skipped).toBe(3);
    expect(status.counters.runs).toBe(1);
    expect(status.last_run?.outcome).toBe('success');
    expect(receiver.ids()).toEqual(['a']);
  });

  it('does not interrupt a slow run that outlives the cron interval', async () => {
    const poller = newPoller('seed'); // cron every minute, lease_ttl 15m
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    upstream.add('slow', start + MINUTE);
    const held = upstream.holdNext();

    await poller.trigger();
    const run = poller.alarm();
    await held.arrived();
    // Three minutes into the run: three cron ticks have come and gone.
    await poller.sql('UPDATE poller_state SET lease_started_at = lease_started_at - ?', 3 * MINUTE);
    for (let tick = 0; tick < 3; tick += 1)
      expect((await poller.trigger()).outcome).toBe('skipped');
    const lease = (await poller.status()).lease;
    expect(lease.held).toBe(true);
    expect(Date.parse(lease.expires_at ?? '')).toBeGreaterThan(Date.now());
    held.release();
    await run;
    await poller.settle();

    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('success');
    expect(status.last_run?.epoch).toBe(1);
    expect(await poller.checkpoint()).toBeGreaterThan(start);
    expect(receiver.ids()).toEqual(['slow']);
  });
});

describe('R5: the alarm is the crash-recovery lease', () => {
  it('sets the alarm to the lease expiry while a run is going', async () => {
    const poller = newPoller('seed');
    const held = upstream.holdNext();
    await poller.trigger();
    const run = poller.alarm();
    await held.arrived();
    const status = await poller.status();
    expect(status.next_alarm_at).toBe(status.lease.expires_at);
    // lease_ttl (15m) counted from the moment the run really started.
    const ttl =
      Date.parse(status.lease.expires_at ?? '') - Date.parse(status.lease.started_at ?? '');
    expect(ttl).toBeGreaterThanOrEqual(15 * MINUTE);
    expect(ttl).toBeLessThan(15 * MINUTE + 1_000);
    held.release();
    await run;
    await poller.settle();
    expect((await poller.status()).next_alarm_at).toBeNull();
  });

  it('recovers a run that died while its upstream request was pending, by the alarm alone', async () => {
    const poller = newPoller('seed');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    for (const id of ['a', 'b', 'c', 'd']) upstream.add(id, start + MINUTE);
    const held = upstream.holdNext();

    await poller.trigger();
    const dying = poller.alarm().catch((error: unknown) => error);
    await held.arrived();
    await poller.abort(); // deploy, eviction, crash: the run is gone mid-request
    await dying;
    held.release();

    let status = await poller.status();
    expect(status.lease.held).toBe(true); // nobody released it
    expect(status.next_alarm_at).toBe(status.lease.expires_at);
    expect(await poller.checkpoint()).toBe(start);

    // No cron arrives. The lease TTL runs out, and the alarm fires.
    await poller.expireLease();
    await poller.alarm();
    await poller.settle();

    status = await poller.status();
    expect(status.counters.recoveries).toBe(1);
    const runs = await poller.runs();
    expect(runs.map((r) => r.outcome)).toEqual(['success', 'recovered']);
    expect(runs[0]?.trigger).toBe('recovery');
    expect(runs[0]?.epoch).toBe(2);
    expect(receiver.ids().sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(await poller.checkpoint()).toBeGreaterThan(start);
    expect(status.lease.held).toBe(false);
  });

  it('a cron tick that finds an expired lease also recovers it', async () => {
    const poller = newPoller('seed');
    const held = upstream.holdNext();
    await poller.trigger();
    const dying = poller.alarm().catch((error: unknown) => error);
    await held.arrived();
    await poller.abort();
    await dying;
    held.release();
    await poller.expireLease();

    const reply = await poller.tick();
    expect(reply).toMatchObject({ outcome: 'started', recovered: true });
    expect((await poller.status()).counters.recoveries).toBe(1);
    expect((await poller.status()).last_run?.outcome).toBe('success');
  });
});

describe('R6: fencing', () => {
  it('a run whose lease was taken over commits nothing', async () => {
    const poller = newPoller('seed');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    upstream.add('seen-by-both', start + MINUTE);
    const held = upstream.holdNext();

    await poller.trigger();
    const stale = poller.alarm(); // run 1, stuck on the upstream
    await held.arrived();
    await poller.expireLease(); // ...for longer than its lease
    await poller.alarm(); // the alarm recovers: run 2 takes over and finishes
    const checkpointOfRun2 = await poller.checkpoint();
    expect(receiver.ids()).toEqual(['seen-by-both']);

    upstream.add('only-run-1-would-see', start + 2 * MINUTE);
    held.release(); // run 1 wakes up with its page
    await stale;

    expect(await poller.checkpoint()).toBe(checkpointOfRun2);
    expect(receiver.ids()).toEqual(['seen-by-both']);
    const runs = await poller.runs();
    expect(runs[0]).toMatchObject({ epoch: 1, outcome: 'fenced', records: 0 });
    expect(runs.map((r) => r.outcome)).toEqual(['fenced', 'success', 'recovered']);
    expect((await poller.status()).lease).toMatchObject({ held: false, epoch: 2 });
  });
});

describe('enabled = false', () => {
  it('skips every trigger and runs no alarm', async () => {
    const poller = newPoller('disabled');
    expect(await poller.trigger('manual')).toMatchObject({
      outcome: 'skipped',
      reason: 'disabled',
    });
    expect(await poller.trigger('cron')).toMatchObject({ outcome: 'skipped', reason: 'disabled' });
    await poller.settle();
    expect(upstream.requests).toHaveLength(0);
    expect((await poller.status()).counters).toMatchObject({ runs: 0, skipped: 2 });
  });
});
