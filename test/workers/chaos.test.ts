import { beforeEach, describe, expect, it } from 'vitest';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

/**
 * Kills the real Durable Object at a step of a run, then lets nothing but the alarm act:
 * the lease expires, the alarm recovers, and the invariant holds — every update stamped
 * below C was delivered (at least once).
 */
async function crashAndRecover(
  step: 'after-lease' | 'page-pending' | 'mid-delivery' | 'before-commit',
) {
  const poller = newPoller('seed'); // per_page 3
  const start = Date.now() - 10 * MINUTE;
  await poller.setCheckpoint(start);
  for (let i = 0; i < 7; i += 1) upstream.add(`c${i}`, start + (i + 1) * 10_000);

  if (step === 'after-lease') {
    // The lease row is written; the object dies before its alarm's run gets anywhere.
    // workerd may fire that alarm at once by itself: its first request is held, so the run
    // it starts cannot commit before the object dies (released after, for the recovery).
    const held = upstream.holdNext();
    await poller.trigger();
    await poller.abort();
    held.release();
  } else {
    await poller.trigger();
    const held =
      step === 'page-pending'
        ? upstream.holdNext()
        : receiver.holdNth(step === 'mid-delivery' ? 2 : 7); // the 7th delivery is the last before the commit
    const dying = poller.alarm().catch((error: unknown) => error);
    await held.arrived();
    await poller.abort();
    await dying;
    held.release();
  }
  const afterCrash = await poller.status();
  expect(afterCrash.lease.held).toBe(true);
  expect(await poller.checkpoint()).toBe(start); // nothing committed by the dead run

  // No cron, no admin: the lease runs out and its alarm fires (run now, as at its time).
  await poller.expireLease();
  await poller.alarm();
  await poller.settle();

  const status = await poller.status();
  expect(status.counters.recoveries).toBe(1);
  expect(status.last_run?.outcome).toBe('success');
  expect(status.lease.held).toBe(false);
  const checkpoint = (await poller.checkpoint()) ?? 0;
  expect(checkpoint).toBeGreaterThan(start);
  const delivered = new Set(receiver.deliveries.map((d) => `${d.id}@${d.version}`));
  const below = upstream.updates.filter((u) => u.updatedAtMs < checkpoint);
  expect(below.filter((u) => !delivered.has(`${u.id}@${u.updatedAt}`))).toEqual([]);
  expect(below).toHaveLength(7);
}

describe('chaos: the object dies at each step of a run, and the alarm alone recovers', () => {
  it('after the lease write, before the run starts', () => crashAndRecover('after-lease'));
  it('while a page request is pending', () => crashAndRecover('page-pending'));
  it('in the middle of delivering a page', () => crashAndRecover('mid-delivery'));
  it('during the last delivery, just before the commit', () => crashAndRecover('before-commit'));
});
