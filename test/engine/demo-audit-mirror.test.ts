import { describe, expect, it } from 'vitest';
import { compareMirror, type MirrorRow, retryingOf } from '../../src/demo/audit-mirror.ts';
import type { SessionFacts } from '../../src/demo/upstream-types.ts';
import type { RetryingUpdate } from '../../src/poller/rpc.ts';

const T = Date.parse('2026-06-01T00:00:00Z');
const CHECKPOINT = T + 60_000;

const session = (id: string, facts: Partial<SessionFacts> = {}): SessionFacts => ({
  id,
  created_at_ms: T,
  first_visible_at_ms: T,
  updated_at_ms: T + 10_000,
  due_ms: T + 10_000,
  deleted_at_ms: null,
  deleted_kind: null,
  ...facts,
});

const row = (id: string, at: number, deleted = 0): MirrorRow => ({
  id,
  updated_at_ms: at,
  deleted,
  upserted_at_ms: at,
});

/** The demo audit's mirror check with these sessions, D1 rows and failing updates. */
function mirrorOf(
  sessions: SessionFacts[],
  mirror: MirrorRow[],
  failing: RetryingUpdate[],
  more: Partial<Parameters<typeof compareMirror>[0]> = {},
) {
  return compareMirror({
    sessions: new Map(sessions.map((facts) => [facts.id, facts])),
    mirror,
    logFrom: T,
    deletionsThrough: CHECKPOINT,
    listing: null,
    listingDeletes: null,
    lag: 0,
    runs: [],
    checkpoint: new Date(CHECKPOINT).toISOString(),
    retrying: retryingOf(failing),
    ...more,
  });
}

describe('the demo audit’s mirror check with updates stored as failing (R19)', () => {
  const failing = (id: string, at: number, suffix = ''): RetryingUpdate => ({
    key: `demo_sessions:${id}:${new Date(at).toISOString()}${suffix}`,
    id,
    version_ms: at,
    attempts: 1,
  });

  it('counts a session whose due update is stored as failing as in flight, and as missing or stale once it is not stored', () => {
    const sessions = [session('a'), session('b'), session('ok')];
    const mirror = [row('b', T + 5_000), row('ok', T + 10_000)];
    const retrying = [failing('a', T + 10_000), failing('b', T + 10_000)];

    const flight = mirrorOf(sessions, mirror, retrying);
    expect(flight).toMatchObject({ equal: true, missing: 0, stale: 0, in_flight: 2 });

    const lost = mirrorOf(sessions, mirror, []);
    expect(lost).toMatchObject({ equal: false, missing: 1, stale: 1, in_flight: 0 });
    expect(lost.sample.map((entry) => [entry.id, entry.kind])).toEqual([
      ['a', 'missing'],
      ['b', 'stale'],
    ]);
  });

  it('counts a session deleted upstream whose delete is stored as failing as in flight, not a ghost', () => {
    const deleted = session('g', { deleted_at_ms: T + 20_000, deleted_kind: 'recorded' });
    const mirror = [row('g', T + 10_000)];
    const deleteFailing = failing('g', T + 20_000, ':deleted');

    expect(mirrorOf([deleted], mirror, [deleteFailing])).toMatchObject({
      equal: true,
      ghosts: 0,
      in_flight: 1,
    });
    expect(mirrorOf([deleted], mirror, [])).toMatchObject({ equal: false, ghosts: 1 });
  });

  it('still counts a missing session when what is stored as failing is another version of it', () => {
    const sessions = [session('a')];
    expect(mirrorOf(sessions, [], [failing('a', T + 3_000)])).toMatchObject({
      equal: false,
      missing: 1,
    });
  });
});

describe('the demo audit’s mirror check of a listing’s deletes', () => {
  it('counts a ghost a listing should have deleted when a partial run had delivered its upsert before the listing', () => {
    const hard = session('h', { deleted_at_ms: T + 20_000, deleted_kind: 'hard' });
    const mirror = [row('h', T + 10_000)];
    const listing = T + 40_000;
    const runs = [
      { outcome: 'partial', startedAt: T + 9_000, finishedAt: T + 12_000 },
      { outcome: 'success', startedAt: T + 45_000, finishedAt: T + 50_000 },
    ];
    const report = mirrorOf([hard], mirror, [], {
      deletionsThrough: null,
      listing,
      listingDeletes: listing,
      runs,
    });
    expect(report).toMatchObject({ equal: false, ghosts: 1 });
    // Delivered by the run after the listing, it is not due yet.
    const later = mirrorOf([hard], mirror, [], {
      deletionsThrough: null,
      listing,
      listingDeletes: listing,
      runs: runs.slice(1),
    });
    expect(later).toMatchObject({ equal: true, ghosts: 0, in_flight: 1 });
  });
});
