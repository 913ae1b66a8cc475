import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/engine/ports.ts';
import type { Poller as PollerObject } from '../../src/poller/durable-object.ts';
import { IDLE_WRITE_EVERY_MS } from '../../src/poller/store/idle-runs.ts';
import { SqliteStore } from '../../src/poller/store/index.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

/** A poller that schedules itself, past its first runs, with what they wrote on disk. */
async function idlePoller() {
  const poller = newPoller('batched');
  await poller.setCheckpoint(Date.now() - MINUTE);
  await poller.stub().ensureScheduled();
  await poller.ownTick();
  await poller.sql('SELECT 1'); // what waits in memory is written: a known start
  return poller;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('an idle run writes nothing but its alarm', () => {
  it('keeps its checkpoint, counters and history line in memory, and shows them as if written', async () => {
    const poller = await idlePoller();
    const stored = await poller.storedRow();
    await sleep(5);
    await poller.ownTick();
    await sleep(5);
    await poller.ownTick();
    const status = await poller.status();
    // On disk: nothing of the two runs.
    expect(await poller.storedRow()).toMatchObject({
      checkpoint: stored.checkpoint,
      runs: stored.runs,
      lease_held: 0,
    });
    // Shown: where they left the poller.
    expect(Date.parse(status.checkpoint ?? '')).toBeGreaterThan(stored.checkpoint ?? 0);
    expect(status.counters.runs).toBe(stored.runs + 2);
    expect(status.last_run).toMatchObject({ outcome: 'success', records: 0 });
    expect(status.lease.held).toBe(false);
  });

  it('a poller that measures lateness (lag_allowance) writes no row either', async () => {
    const poller = newPoller('lagging');
    await poller.setCheckpoint(Date.now() - MINUTE);
    await poller.stub().ensureScheduled();
    await poller.ownTick();
    await poller.sql('SELECT 1');
    for (let i = 0; i < 3; i += 1) {
      const before = await poller.stub().storageStats();
      await poller.ownTick();
      const after = await poller.stub().storageStats();
      expect(after.rowsWritten - before.rowsWritten).toBe(0);
    }
    expect((await poller.status()).last_run).toMatchObject({ outcome: 'success', records: 0 });
  });

  it('a crash loses only idle runs: the checkpoint goes back, and the next window covers the gap', async () => {
    const poller = await idlePoller();
    const stored = (await poller.storedRow()).checkpoint ?? 0;
    await sleep(20);
    await poller.ownTick();
    const shown = Date.parse((await poller.status()).checkpoint ?? '');
    expect(shown).toBeGreaterThan(stored + 10);
    await poller.abort(); // its memory is gone
    expect(Date.parse((await poller.status()).checkpoint ?? '')).toBe(stored);
    // A record stamped between the checkpoint on disk and the one lost, that the upstream
    // shows only now (a replication lag): the longer window after the crash delivers it.
    upstream.add('late', stored + 5);
    await poller.ownTick();
    expect(receiver.ids()).toEqual(['late']);
  });

  it('a trigger during an idle run finds its lease (held in memory) and is skipped (R4)', async () => {
    const poller = await idlePoller();
    const held = upstream.holdNext();
    await poller.dueNow();
    const running = poller.alarm();
    await held.arrived();
    expect(await poller.trigger('manual')).toMatchObject({
      outcome: 'skipped',
      reason: 'lease_held',
    });
    held.release();
    await running;
    await poller.settle();
    expect((await poller.status()).counters.skipped).toBe(1);
  });

  it('a run with records writes its lease before its first delivery: killed then, it is recovered (R5)', async () => {
    const poller = await idlePoller();
    upstream.add('a', Date.now()); // after the last run's window: in the next one
    await sleep(5);
    const held = receiver.holdNth(1);
    await poller.dueNow();
    const dying = poller.alarm().catch((error: unknown) => error);
    await held.arrived();
    await poller.abort(); // mid-delivery: the receiver may have the record
    await dying;
    held.release();
    expect(await poller.storedRow()).toMatchObject({ lease_held: 1 });
    await poller.expireLease();
    await poller.alarm();
    await poller.settle();
    const runs = await poller.runs();
    expect(runs.map((run) => run.outcome).slice(0, 2)).toEqual(['success', 'recovered']);
    expect((await poller.status()).counters.recoveries).toBe(1);
    expect(receiver.ids()).toContain('a');
  });
});

describe('idle runs are written together, IDLE_WRITE_EVERY_MS apart', () => {
  const freshObject = () => env.POLLER.get(env.POLLER.idFromName(`t-${crypto.randomUUID()}`));

  /** One idle run of the store, at `at`, under the next epoch: what it wrote, in rows. */
  function idleRun(store: SqliteStore, at: number): number {
    const before = store.writeCounts().rows;
    const state = store.read();
    const epoch = state.lease.epoch + 1;
    const lease = {
      epoch,
      trigger: 'cron' as const,
      held: true,
      phase: 'running' as const,
      startedAt: at,
      expiresAt: at + 15 * MINUTE,
    };
    expect(store.acquire(state.lease.epoch, lease, at + MINUTE)).toBe(true);
    const run: RunRecord = {
      epoch,
      trigger: 'cron',
      outcome: 'success',
      startedAt: at,
      finishedAt: at + 50,
      windows: 1,
      pages: 1,
      records: 0,
      deadLettered: 0,
      error: null,
      checkpoint: at,
    };
    const next = {
      failures: 0,
      wakeup: null,
      skewMs: null,
      rateLimitedUntil: null,
      stall: null,
      straggleMs: 0,
    };
    const commit = { checkpoint: at, remember: [], pruneBelow: at };
    expect(store.finishRun(epoch, run, next, commit)).toBe(true);
    return store.writeCounts().rows - before;
  }

  it('writes one row for every run in IDLE_WRITE_EVERY_MS, and none between', () =>
    runInDurableObject(freshObject(), (_instance: PollerObject, state) => {
      const store = new SqliteStore(state.storage);
      const start = Date.UTC(2026, 11, 1);
      const stored = () =>
        state.storage.sql
          .exec<{ checkpoint: number | null; runs: number }>(
            'SELECT checkpoint, runs FROM poller_state',
          )
          .one();
      const rows: number[] = [];
      // A run a minute, each invocation ending with writeIfDue: the first is written (nothing
      // on disk says when the row was), the next 19 wait in memory, the 21st (20 minutes on)
      // writes them all, with itself, in one row.
      for (let minute = 0; minute <= 20; minute += 1) {
        const at = start + minute * MINUTE;
        const before = store.writeCounts().rows;
        expect(idleRun(store, at)).toBe(0);
        store.writeIfDue(at + 100);
        rows.push(store.writeCounts().rows - before);
      }
      expect(rows).toEqual([1, ...Array(19).fill(0), 1]);
      expect(IDLE_WRITE_EVERY_MS).toBe(20 * MINUTE);
      expect(stored()).toEqual({ checkpoint: start + 20 * MINUTE, runs: 21 });
      expect(store.history.runs(1)[0]).toMatchObject({ outcome: 'success', folded: {} });
      expect(idleRun(store, start + 21 * MINUTE)).toBe(0);
      expect(stored().runs).toBe(21);
      expect(store.counters().runs).toBe(22);
    }));

  it('an object evicted after every run still writes its state every IDLE_WRITE_EVERY_MS', () =>
    runInDurableObject(freshObject(), (_instance: PollerObject, state) => {
      const start = Date.UTC(2026, 11, 1);
      const rows: number[] = [];
      for (let minute = 0; minute <= 20; minute += 5) {
        // A fresh store each time: what the last one kept in memory is gone with it.
        const store = new SqliteStore(state.storage);
        const at = start + minute * MINUTE;
        const before = store.writeCounts().rows;
        idleRun(store, at);
        store.writeIfDue(at + 100);
        rows.push(store.writeCounts().rows - before);
      }
      expect(rows).toEqual([1, 0, 0, 0, 1]);
      const row = state.storage.sql
        .exec<{ checkpoint: number; written_at: number }>(
          'SELECT checkpoint, written_at FROM poller_state',
        )
        .one();
      expect(row).toEqual({
        checkpoint: start + 20 * MINUTE,
        written_at: start + 20 * MINUTE + 50,
      });
    }));

  it('writes what waits before the next write of any kind, in its transaction', () =>
    runInDurableObject(freshObject(), (_instance: PollerObject, state) => {
      const store = new SqliteStore(state.storage);
      const start = Date.UTC(2026, 11, 1);
      idleRun(store, start);
      idleRun(store, start + MINUTE);
      const before = store.writeCounts().rows;
      store.setPaused(true);
      expect(store.writeCounts().rows - before).toBe(2); // what waited, then the pause
      const row = state.storage.sql
        .exec<{ checkpoint: number; runs: number; paused: number }>(
          'SELECT checkpoint, runs, paused FROM poller_state',
        )
        .one();
      expect(row).toEqual({ checkpoint: start + MINUTE, runs: 2, paused: 1 });
    }));
});
