import { expect } from 'vitest';
import type { Lease } from '../../src/engine/lease.ts';
import {
  ledgerKey,
  type PollerStore,
  type RememberedId,
  type RunAftermath,
  type RunRecord,
} from '../../src/engine/ports.ts';

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

  'grants a lease started at once against the epoch it was read at, and keeps it for persistLease'(
    store,
  ) {
    const running: Lease = { ...lease(1), phase: 'running' };
    expect(store.acquire(0, running, 60_000)).toBe(true);
    expect(store.acquire(0, { ...running, epoch: 2 })).toBe(false);
    expect(store.read()).toMatchObject({
      lease: { epoch: 1, held: true, phase: 'running' },
      nextTickAt: 60_000,
    });
    expect(store.persistLease(1)).toBe(true);
    expect(store.persistLease(2)).toBe(false);
    expect(store.holds(1)).toBe(true);
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

  'remembers what was delivered of each id under the lease, never an older version over a newer (changes_only, reconcile)'(
    store,
  ) {
    const { idsOf, rememberIds } = store;
    if (!idsOf || !rememberIds) throw new Error('the store keeps no per-id memory');
    store.acquire(0, lease(1));
    store.markRunning(1, 950_000);
    const a2: RememberedId = { id: 'a', versionMs: 2_000, hash: 'h2', deleted: false, seenAt: 10 };
    const b1: RememberedId = { id: 'b', versionMs: 1_000, hash: null, deleted: true, seenAt: 11 };
    expect(rememberIds.call(store, 1, [a2, b1])).toBe(true);
    rememberIds.call(store, 1, [{ ...a2, versionMs: 1_000, hash: 'h1' }]);
    expect(idsOf.call(store, ['a', 'b', 'c'])).toEqual(
      new Map([
        ['a', a2],
        ['b', b1],
      ]),
    );
    store.acquire(1, lease(2)); // taken over
    expect(rememberIds.call(store, 1, [{ ...a2, id: 'c' }])).toBe(false);
    expect(idsOf.call(store, ['c']).size).toBe(0);
  },

  'keeps the deletions stream its own checkpoint and ledger, fenced (source.deletions)'(store) {
    const stream = store.deletionsStream;
    if (!stream) throw new Error('the store keeps no deletions stream');
    expect(stream.checkpoint()).toBeNull();
    store.acquire(0, lease(1));
    store.markRunning(1, 950_000);
    expect(
      stream.commitWindow(
        1,
        5_000,
        [
          { id: 'x', version: '4', versionMs: 4_000 },
          { id: 'y', version: '1', versionMs: 1_000 },
        ],
        2_000,
      ),
    ).toBe(true);
    expect(stream.checkpoint()).toBe(5_000);
    expect([...stream.delivered(0)]).toEqual([ledgerKey('x', '4')]);
    expect(store.read().checkpoint).toBeNull(); // the main stream's is its own
    expect(store.delivered(0).size).toBe(0);
    store.acquire(1, lease(2));
    expect(stream.commitWindow(1, 9_000, [], 0)).toBe(false);
    expect(stream.checkpoint()).toBe(5_000);
  },

  'keeps the deletions stream its own stall, fenced, over once its checkpoint moves'(store) {
    const stream = store.deletionsStream;
    if (!stream) throw new Error('the store keeps no deletions stream');
    expect(stream.stall()).toBeNull();
    store.acquire(0, lease(1));
    store.markRunning(1, 950_000);
    expect(stream.keepStall(1, { from: 3_000, pages: 7 })).toBe(true);
    expect(stream.stall()).toEqual({ from: 3_000, pages: 7 });
    expect(store.read().stall).toBeNull(); // the main stream's is its own
    expect(stream.commitWindow(1, 5_000, [], 0)).toBe(true);
    expect(stream.stall()).toBeNull();
    expect(stream.keepStall(1, { from: 5_000, pages: 2 })).toBe(true);
    store.acquire(1, lease(2));
    expect(stream.keepStall(1, null)).toBe(false);
    expect(stream.stall()).toEqual({ from: 5_000, pages: 2 });
  },

  "stores a round's token only with a commit, and keeps its page cursor fenced (R20)"(store) {
    const rounds = store.rounds;
    if (rounds === undefined) throw new Error('the store keeps no resume rounds');
    // A lease started at once: an idle run's finish may wait in memory, a token must not.
    store.acquire(0, { ...lease(1), phase: 'running' });
    expect(rounds.keepCursor(1, 'page-2', 1)).toBe(true);
    expect(rounds.read()).toMatchObject({ token: null, tokenAt: null, cursor: 'page-2', pages: 1 });
    const round = { token: 't-1', at: 2_000 };
    const commit = { checkpoint: 5_000, remember: [], pruneBelow: 0, round };
    expect(store.finishRun(1, run(1), aftermath({}), commit)).toBe(true);
    expect(rounds.read()).toMatchObject({ token: 't-1', tokenAt: 2_000, cursor: null, pages: 0 });
    expect(store.read().checkpoint).toBe(5_000);
    store.acquire(1, lease(2));
    store.acquire(2, lease(3)); // taken over
    expect(rounds.keepCursor(2, 'page-9', 4)).toBe(false);
    expect(store.commitWindow(2, 9_000, [], 0, { token: 't-2', at: 3_000 })).toBe(false);
    expect(rounds.read()).toMatchObject({ token: 't-1', tokenAt: 2_000, cursor: null, pages: 0 });
    expect(store.commitWindow(3, 9_000, [], 0, { token: 't-2', at: 3_000 })).toBe(true);
    expect(rounds.read()).toMatchObject({ token: 't-2', tokenAt: 3_000 });
  },

  'an expired token is cleared with its page cursor and the resync noted, fenced'(store) {
    const rounds = store.rounds;
    if (rounds === undefined) throw new Error('the store keeps no resume rounds');
    store.acquire(0, { ...lease(1), phase: 'running' });
    expect(store.commitWindow(1, 5_000, [], 0, { token: 't-1', at: 2_000 })).toBe(true);
    expect(rounds.keepCursor(1, 'page-3', 2)).toBe(true);
    expect(rounds.expire(1, 4_000, 'HTTP 410')).toBe(true);
    expect(rounds.read()).toEqual({
      token: null,
      tokenAt: null,
      cursor: null,
      pages: 0,
      resync: { at: 4_000, reason: 'HTTP 410' },
    });
    expect(store.commitWindow(1, 6_000, [], 0, { token: 't-2', at: 5_000 })).toBe(true);
    expect(rounds.read()).toMatchObject({ token: 't-2', resync: { at: 4_000 } });
    store.acquire(1, lease(2)); // taken over
    expect(rounds.expire(1, 7_000, 'HTTP 410')).toBe(false);
    expect(rounds.read()).toMatchObject({ token: 't-2', resync: { at: 4_000 } });
  },

  'keeps the child listing in progress, fenced, and forgets it when the listing ends'(store) {
    const children = store.childProgress;
    if (children === undefined) throw new Error('the store keeps no child listing');
    store.acquire(0, { ...lease(1), phase: 'running' });
    expect(children.read()).toBeNull();
    expect(children.keep(1, { parent: 'P-1\u00002026', cursor: '2', pages: 1 })).toBe(true);
    expect(children.keep(1, { parent: 'P-1\u00002026', cursor: '4', pages: 2 })).toBe(true);
    expect(children.read()).toEqual({ parent: 'P-1\u00002026', cursor: '4', pages: 2 });
    store.acquire(1, lease(2)); // taken over
    expect(children.keep(1, null)).toBe(false);
    expect(children.hold(1, 5_000, 'P-1', ['P-1/a'])).toBe(false);
    expect(children.read()).toMatchObject({ cursor: '4' });
    store.markRunning(2, 950_000);
    expect(children.keep(2, null)).toBe(true);
    expect(children.read()).toBeNull();
  },

  "knows a parent's children by their id prefix: not another parent's, not deleted ones"(store) {
    const children = store.childProgress;
    if (children === undefined || store.rememberIds === undefined) {
      throw new Error('the store keeps no child listing or per-id memory');
    }
    store.acquire(0, { ...lease(1), phase: 'running' });
    const ids = ['P/1', 'P/2', 'P/3', 'P0', 'P%2Fx/1', 'PQ/1', 'P'];
    const entries = ids.map((id) => ({
      id,
      versionMs: 1,
      hash: null,
      deleted: id === 'P/3',
      seenAt: 1,
    }));
    expect(store.rememberIds(1, entries)).toBe(true);
    expect(children.known('P/')).toEqual(['P/1', 'P/2']);
    expect(children.known('P%2Fx/')).toEqual(['P%2Fx/1']);
  },

  "keeps a failing child's parent with its failure"(store) {
    store.acquire(0, { ...lease(1), phase: 'running' });
    const failure = {
      key: 'p:P%2F1/9:v',
      id: 'P/9',
      version: 'v',
      versionMs: 1,
      record: { id: 9 },
      attempts: 1,
      firstFailure: 1,
      lastFailure: 1,
      lastError: 'HTTP 500',
    };
    expect(store.recordFailure(1, { ...failure, parent: 'P' })).toBe(true);
    expect(store.recordFailure(1, { ...failure, key: 'p:Q:v', id: 'Q' })).toBe(true);
    expect(store.failing().get('p:P%2F1/9:v')?.parent).toBe('P');
    expect(store.failing().get('p:Q:v')).not.toHaveProperty('parent');
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
