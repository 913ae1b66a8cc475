import { expect } from 'vitest';
import type { Lease } from '../../src/engine/lease.ts';
import type { PollerStore, RunAftermath, RunRecord } from '../../src/engine/ports.ts';

/**
 * The PollerStore contract: what the engine relies on, run against the in-memory store (Node)
 * and the SQLite store (workerd) alike. Each case gets a fresh store.
 */
export const storeContract: Record<string, (store: PollerStore) => void> = {
  'starts empty, with no lease and no checkpoint'(store) {
    const state = store.read();
    expect(state.checkpoint).toBeNull();
    expect(state.lease).toMatchObject({ epoch: 0, held: false });
    expect(state.wakeup).toBeNull();
  },

  'grants a lease only against the epoch it was read at (compare-and-set)'(store) {
    expect(store.acquire(0, lease(1))).toBe(true);
    expect(store.acquire(0, lease(1))).toBe(false);
    expect(store.read().lease).toMatchObject({ epoch: 1, held: true, phase: 'acquired' });
  },

  'marks a run as running exactly once per epoch'(store) {
    store.acquire(0, lease(1));
    expect(store.markRunning(1, 950_000)).toBe(true);
    expect(store.read().lease).toMatchObject({ phase: 'running', expiresAt: 950_000 });
    expect(store.markRunning(1, 950_000)).toBe(false);
    expect(store.markRunning(2, 950_000)).toBe(false);
  },

  'fences every commit to the holder of the lease (R6)'(store) {
    store.acquire(0, lease(1));
    store.markRunning(1, 950_000);
    store.acquire(1, lease(2)); // taken over
    expect(store.commitWindow(1, 5_000, [{ id: 'a', version: 'v', versionMs: 5_000 }], 0)).toBe(
      false,
    );
    expect(store.remember(1, [{ id: 'b', version: 'v', versionMs: 1 }])).toBe(false);
    expect(store.finishRun(1, run(1), aftermath({}))).toBe(false);
    expect(store.read().checkpoint).toBeNull();
    expect(store.delivered(0).size).toBe(0);
    expect(store.read().lease).toMatchObject({ epoch: 2, held: true });
  },

  'remembers delivered content under the lease, never an older version over a newer (changes_only)'(
    store,
  ) {
    const { contentOf, rememberContent } = store;
    if (!contentOf || !rememberContent) throw new Error('the store keeps no content');
    store.acquire(0, lease(1));
    store.markRunning(1, 950_000);
    expect(
      rememberContent.call(store, 1, [
        { id: 'a', versionMs: 2_000, hash: 'h2' },
        { id: 'b', versionMs: 1_000, hash: 'hb' },
      ]),
    ).toBe(true);
    rememberContent.call(store, 1, [{ id: 'a', versionMs: 1_000, hash: 'h1' }]);
    expect(contentOf.call(store, ['a', 'b', 'c'])).toEqual(
      new Map([
        ['a', { id: 'a', versionMs: 2_000, hash: 'h2' }],
        ['b', { id: 'b', versionMs: 1_000, hash: 'hb' }],
      ]),
    );
    store.acquire(1, lease(2)); // taken over
    expect(rememberContent.call(store, 1, [{ id: 'c', versionMs: 3_000, hash: 'hc' }])).toBe(false);
    expect(contentOf.call(store, ['c']).size).toBe(0);
  },

  'commits C with the ledger the next window needs, pruning below it (R9)'(store) {
    store.acquire(0, lease(1));
    store.markRunning(1, 950_000);
    store.remember(1, [
      { id: 'old', version: '1', versionMs: 1_000 },
      { id: 'kept', version: '2', versionMs: 9_000 },
    ]);
    expect(
      store.commitWindow(1, 8_000, [{ id: 'edge', version: '3', versionMs: 8_000 }], 8_000),
    ).toBe(true);
    expect(store.read().checkpoint).toBe(8_000);
    const keys = [...store.delivered(0)];
    expect(keys).toHaveLength(2);
    expect(store.delivered(8_000).size).toBe(2);
    expect(store.delivered(8_001).size).toBe(1);
  },

  'releases the lease and books the next wakeup when a run finishes'(store) {
    store.acquire(0, lease(1));
    store.markRunning(1, 950_000);
    const wakeup = { at: 99_000, reason: 'retry' as const, failure: 'transient' as const };
    expect(
      store.finishRun(
        1,
        run(1),
        aftermath({ failures: 3, wakeup, skewMs: 1_500, rateLimitedUntil: 50_000 }),
      ),
    ).toBe(true);
    expect(store.read()).toMatchObject({
      lease: { held: false, epoch: 1 },
      failures: 3,
      wakeup,
      skewMs: 1_500,
      rateLimitedUntil: 50_000,
    });
    // Acquiring clears the booked wakeup: the new run is that wakeup.
    expect(store.acquire(1, lease(2))).toBe(true);
    expect(store.read().wakeup).toBeNull();
  },

  'keeps the last skew measurement when a run measured none'(store) {
    store.acquire(0, lease(1));
    store.markRunning(1, 950_000);
    store.finishRun(1, run(1), aftermath({ skewMs: -2_000 }));
    store.acquire(1, lease(2));
    store.markRunning(2, 950_000);
    store.finishRun(2, run(2), aftermath({ skewMs: null }));
    expect(store.read().skewMs).toBe(-2_000);
  },
};

function aftermath(overrides: Partial<RunAftermath>): RunAftermath {
  return {
    failures: 0,
    wakeup: null,
    skewMs: null,
    rateLimitedUntil: null,
    stall: null,
    straggleMs: 0,
    ...overrides,
  };
}

function lease(epoch: number): Lease {
  return {
    epoch,
    trigger: 'cron',
    held: true,
    phase: 'acquired',
    startedAt: 1_000,
    expiresAt: 901_000,
  };
}

function run(epoch: number): RunRecord {
  return {
    epoch,
    trigger: 'cron',
    outcome: 'success',
    startedAt: 1_000,
    finishedAt: 2_000,
    windows: 1,
    pages: 1,
    records: 0,
    deadLettered: 0,
    error: null,
    checkpoint: null,
  };
}
