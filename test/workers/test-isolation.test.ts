import { beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;

beforeEach(() => {
  ({ upstream } = installFakes());
});

/** Made by the first test, looked at by the second. */
let left: ReturnType<typeof newPoller> | undefined;

describe("a test's own poller, once its test is over", () => {
  it('(set-up) fails a run and books a retry a few seconds ahead', async () => {
    left = newPoller('seed');
    await left.setCheckpoint(Date.now() - MINUTE);
    upstream.respondOnce(() => new Response('oops', { status: 500 }));

    await left.tick();

    const status = await left.status();
    expect(status.next_wakeup?.reason).toBe('retry');
    expect(Date.parse(status.next_alarm_at ?? '')).toBeLessThan(Date.now() + MINUTE);
  });

  it("wakes no more: its retry cannot poll the next test's upstream or deliver to its receiver", async () => {
    const status = await left?.status();
    expect(status?.paused).toBe(true);
    expect(status?.next_alarm_at).toBeNull();
  });
});
