import { beforeEach, describe, expect, it } from 'vitest';
import { PAGES_KEPT_EVERY_MS } from '../../src/engine/poll-window.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
/**
 * The 'seed' poller's deliver.concurrency × deliver.batch (6 × 1), plus the page in flight
 * (3): the most a crash may make it deliver again.
 */
const IN_FLIGHT = 6 * 1 + 3;
const RECORDS = 24; // 8 pages of 3: one window, unsorted, so C moves only at its end
const POSITIONS = 50;

let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

/** Positions from a seeded source (mulberry32), so a failure names the one it failed at. */
function positions(seed: number, count: number, below: number): number[] {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return Array.from({ length: count }, () => 1 + Math.floor(next() * below));
}

/** Kills the object while the receiver holds its `nth` request, then lets it recover. */
async function crashAt(nth: number) {
  const poller = newPoller('seed');
  const start = Date.now() - 10 * MINUTE;
  await poller.setCheckpoint(start);
  for (let i = 0; i < RECORDS; i += 1) upstream.add(`r${i}`, start + 1_000 + i * 100);
  const held = receiver.holdNth(nth);
  await poller.trigger();
  const dying = poller.alarm().catch((error: unknown) => error);
  await held.arrived();
  await poller.abort(); // a deploy or a crash, mid-window
  await dying;
  held.release();
  await poller.expireLease();
  await poller.alarm(); // recovers: the next run takes the window again
  await poller.settle();
  const counts = new Map<string, number>();
  for (const delivery of receiver.deliveries) {
    counts.set(delivery.id, (counts.get(delivery.id) ?? 0) + 1);
  }
  const redelivered = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
  return { redelivered, distinct: counts.size };
}

describe('a crash redelivers at most what was in flight', () => {
  it(`killed at ${POSITIONS} points of a long window, each recovery redelivers at most concurrency × batch plus the page in flight`, async () => {
    const seen: { at: number; redelivered: number }[] = [];
    for (const at of positions(23, POSITIONS, RECORDS - IN_FLIGHT)) {
      ({ upstream, receiver } = installFakes());
      // A page takes longer than PAGES_KEPT_EVERY_MS, as against a real API: each is kept.
      upstream.delayMs = PAGES_KEPT_EVERY_MS + 5;
      const { redelivered, distinct } = await crashAt(at);
      expect(distinct, `killed at delivery ${at}`).toBe(RECORDS); // nothing lost
      seen.push({ at, redelivered });
    }
    const worst = Math.max(...seen.map((s) => s.redelivered));
    expect(worst, JSON.stringify(seen)).toBeLessThanOrEqual(IN_FLIGHT);
  }, 120_000);
});
