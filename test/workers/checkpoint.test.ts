import { beforeEach, describe, expect, it } from 'vitest';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

describe('R3: downtime is harmless', () => {
  it('delivers every update made during a gap far longer than the cron interval', async () => {
    const poller = newPoller('seed');
    const lastRun = Date.now() - 3 * 60 * MINUTE; // the poller last succeeded 3 hours ago
    await poller.setCheckpoint(lastRun);
    for (let i = 1; i <= 36; i += 1) upstream.add(`s${i}`, lastRun + i * 5 * MINUTE - 30_000);

    await poller.tick();

    expect(receiver.ids().sort()).toEqual(upstream.updates.map((u) => u.id).sort());
    expect(upstream.froms()[0]).toBe(new Date(lastRun).toISOString());
    // A stateless "last 5 minutes" poller would have asked for these only:
    const lookback = upstream.updates.filter((u) => u.updatedAtMs >= Date.now() - 5 * MINUTE);
    expect(lookback.length).toBeLessThan(3);
    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('success');
    expect(status.counters.records_delivered).toBe(36);
  });
});

describe('R1: the checkpoint is the start time, not the end time', () => {
  it('delivers an update stamped during the request but missing from its response on the next run', async () => {
    const poller = newPoller('seed');
    await poller.setCheckpoint(Date.now() - MINUTE);
    upstream.add('early', Date.now() - 30_000);
    let late: ReturnType<FakeUpstream['add']> | undefined;
    upstream.onRequest = () => {
      // Written while the first request is in flight: stamped after T, not in this response.
      late ??= upstream.add('late', Date.now(), { visibleAt: Number.POSITIVE_INFINITY });
    };

    await poller.tick();
    expect(receiver.ids()).toEqual(['early']);
    const checkpoint = await poller.checkpoint();
    expect(checkpoint).not.toBeNull();
    expect(checkpoint).toBeLessThanOrEqual(late?.updatedAtMs ?? 0); // an end-time checkpoint would pass it

    if (late) late.visibleAt = 0;
    await poller.tick();
    expect(receiver.ids()).toEqual(['early', 'late']);
  });

  it('with lag_allowance, catches an update stamped before T that became visible only after T', async () => {
    const poller = newPoller('lagging'); // lag_allowance = "2s"
    await poller.setCheckpoint(Date.now() - MINUTE);
    const replica = upstream.add('replicated-late', Date.now() - 1_000, {
      visibleAt: Number.POSITIVE_INFINITY,
    });

    await poller.tick();
    expect(receiver.ids()).toEqual([]);
    expect(await poller.checkpoint()).toBeLessThanOrEqual(replica.updatedAtMs);

    replica.visibleAt = 0;
    await poller.tick();
    expect(receiver.ids()).toEqual(['replicated-late']);
  });
});

describe('R2: the checkpoint moves only when every update of the window is handled', () => {
  it('moves C once a failing delivery is stored with its record, and the retry redelivers only that update, not the window', async () => {
    const poller = newPoller('seed');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    for (const id of ['a', 'b', 'c', 'd']) upstream.add(id, start + 60_000);
    receiver.fail('b', 500);

    await poller.tick();
    let status = await poller.status();
    // R19: b is stored as failing, with its record: the window commits, the run is partial.
    expect(status.last_run?.outcome).toBe('partial');
    expect(status.last_run?.error).toContain('b@');
    const moved = (await poller.checkpoint()) ?? start;
    expect(moved).toBeGreaterThan(start + 60_000);
    expect(receiver.ids()).toEqual(['a', 'c', 'd']);
    expect(status.next_wakeup?.reason).toBe('retry');
    const stored = await poller.sql<{ id: string; attempts: number; record: string }>(
      'SELECT id, attempts, record FROM delivery_failures',
    );
    expect(stored.map(({ id, attempts }) => ({ id, attempts }))).toEqual([
      { id: 'b', attempts: 1 },
    ]);
    expect(JSON.parse(stored[0]?.record ?? 'null')).toMatchObject({ id: 'b' });

    const requests = upstream.requests.length; // the first run's pages
    await poller.retryNow();
    status = await poller.status();
    // The retry asked for the window after C, not the one before it again, and sent b alone
    // (from its stored record): a, c and d are not delivered twice.
    expect(upstream.froms().slice(0, requests)).toEqual(
      Array(requests).fill(new Date(start).toISOString()),
    );
    expect(upstream.froms().slice(requests).length).toBeGreaterThan(0);
    for (const from of upstream.froms().slice(requests)) {
      expect(Date.parse(from)).toBeGreaterThan(start + 60_000);
    }
    expect(receiver.ids()).toEqual(['a', 'c', 'd', 'b']);
    expect(status.last_run?.outcome).toBe('success');
    expect(await poller.checkpoint()).toBeGreaterThanOrEqual(moved);
    expect(await poller.sql('SELECT key FROM delivery_failures')).toEqual([]);
  });

  it('holds C when a page request fails half-way through the window', async () => {
    const poller = newPoller('seed');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    for (const id of ['a', 'b', 'c', 'd', 'e']) upstream.add(id, start + 60_000);
    upstream.respondOnce((request) => upstream.handle(request)); // page 1 fine
    upstream.respondOnce(() => new Response('<html>bad gateway</html>', { status: 502 }));

    await poller.tick();
    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('failed');
    expect(status.last_run?.error).toContain('HTTP 502');
    expect(await poller.checkpoint()).toBe(start);
  });
});

describe('R10: ties are inclusive', () => {
  it('delivers every update sharing a timestamp split across pages, and the boundary copy only once', async () => {
    const poller = newPoller('seed'); // per_page = 3
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    const tie = start + 120_000;
    for (const id of ['t1', 't2', 't3', 't4', 't5']) upstream.add(id, tie);
    upstream.add('at-checkpoint', start);

    await poller.tick();
    expect(receiver.ids().sort()).toEqual(['at-checkpoint', 't1', 't2', 't3', 't4', 't5']);
    expect(upstream.requests.length).toBe(2);

    // The next window starts exactly at the new checkpoint: an update stamped there is asked
    // for (>=), and one already delivered there is not delivered again.
    const checkpoint = (await poller.checkpoint()) ?? 0;
    upstream.add('on-boundary', checkpoint);
    await poller.tick();
    await poller.tick();
    expect(receiver.ids().filter((id) => id === 'on-boundary')).toEqual(['on-boundary']);
  });
});
