import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeadlineClock, TIMED_OUT } from '../../src/deadline.ts';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('deadlines of one length share one timer', () => {
  it('requests in flight together arm one timer, not one each', () => {
    const armed = vi.spyOn(globalThis, 'setTimeout');
    const clock = new DeadlineClock(30_000);
    const deadlines = Array.from({ length: 6 }, () => clock.start());
    expect(armed).toHaveBeenCalledTimes(1);
    for (const deadline of deadlines) deadline.clear();
    expect(vi.getTimerCount()).toBe(0); // none left armed once nothing is pending
  });

  it('each deadline still passes `ms` after its own start, in order', async () => {
    const clock = new DeadlineClock(1_000);
    const first = clock.start();
    await vi.advanceTimersByTimeAsync(400);
    const second = clock.start();
    await vi.advanceTimersByTimeAsync(600);
    expect(first.signal.aborted).toBe(true);
    expect(String(first.signal.reason)).toContain('timed out after 1s');
    expect(await first.expired).toBe(TIMED_OUT);
    expect(second.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(399);
    expect(second.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(second.signal.aborted).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a cleared deadline never fires, and a cancelled one ends at once', async () => {
    const clock = new DeadlineClock(1_000);
    const cleared = clock.start();
    const cancel = new AbortController();
    const cancelled = clock.start(cancel.signal);
    cleared.clear();
    cancel.abort(new Error('not wanted'));
    expect(cancelled.signal.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(cleared.signal.aborted).toBe(false);
  });

  it('held for a run, one timer serves requests one after the other, and none is left after', async () => {
    const armed = vi.spyOn(globalThis, 'setTimeout');
    const clock = new DeadlineClock(30_000);
    const release = clock.hold();
    for (let i = 0; i < 100; i += 1) {
      clock.start().clear(); // a fast request
      await vi.advanceTimersByTimeAsync(10);
    }
    expect(armed).toHaveBeenCalledTimes(1);
    const hung = clock.start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(hung.signal.aborted).toBe(true); // its own deadline still holds
    release();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('run() says the work timed out when the deadline comes first', async () => {
    const clock = new DeadlineClock(500);
    const hung = clock.run(() => new Promise<string>(() => {}));
    await vi.advanceTimersByTimeAsync(500);
    expect(await hung).toEqual({ timedOut: true, error: 'timed out after 500ms' });
    expect(await clock.run(async () => 'done')).toEqual({ timedOut: false, value: 'done' });
  });
});
