import { beforeEach, describe, expect, it } from 'vitest';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const HOUR = 3_600_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

describe('R7 and R3: bounded runs and continuation', () => {
  it('commits per window, continues by alarm when the subrequest budget runs out, and finishes the backlog without cron ticks', async () => {
    const poller = newPoller('tiny_budget'); // max_window 1h, max_subrequests 8
    const start = Date.now() - 6 * HOUR;
    await poller.setCheckpoint(start);
    for (let hour = 0; hour < 6; hour += 1) {
      upstream.add(`h${hour}a`, start + hour * HOUR + 10 * 60_000);
      upstream.add(`h${hour}b`, start + hour * HOUR + 40 * 60_000);
    }

    await poller.tick(); // the only cron tick; its continuations follow by alarm

    const runs = (await poller.runs()).reverse(); // oldest first
    expect(runs[0]).toMatchObject({ trigger: 'cron', outcome: 'continued' });
    expect(runs[0]?.error).toContain('subrequest budget');
    expect(runs.filter((r) => r.trigger === 'cron')).toHaveLength(1);
    expect(runs.slice(1).every((r) => r.trigger === 'continuation')).toBe(true);
    expect(runs.at(-1)?.outcome).toBe('success');
    // Progress was committed window by window: each continued run ended on a window boundary.
    let previous = start;
    for (const run of runs.filter((r) => r.outcome === 'continued')) {
      const checkpoint = run.checkpoint ?? 0;
      expect(checkpoint).toBeGreaterThan(previous);
      expect((checkpoint - start) % HOUR).toBe(0);
      previous = checkpoint;
    }
    const done = await poller.status();
    expect(done.next_alarm_at).toBeNull();
    expect(receiver.ids().sort()).toEqual(upstream.updates.map((u) => u.id).sort());
    expect((await poller.checkpoint()) ?? 0).toBeGreaterThan(Date.now() - HOUR);
    // Each window asked for [from, to) with to = from + 1h, never more.
    for (const url of upstream.requests) {
      const from = Date.parse(url.searchParams.get('date_from') ?? '');
      const to = Date.parse(url.searchParams.get('date_to') ?? '');
      expect(to - from).toBeLessThanOrEqual(HOUR);
    }
  });

  it('works through a backlog that fits the budget window by window in one run', async () => {
    const poller = newPoller('bounded'); // max_window 1h
    const start = Date.now() - 3 * 3_600_000 + 60_000;
    await poller.setCheckpoint(start);
    upstream.add('x', start + 5 * 60_000);
    upstream.add('y', start + 2 * HOUR);

    await poller.tick();

    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('success');
    expect(status.last_run?.windows).toBe(3);
    expect(receiver.ids()).toEqual(['x', 'y']);
    expect(upstream.requests.map((url) => url.searchParams.get('date_from'))).toEqual([
      new Date(start).toISOString(),
      new Date(start + HOUR).toISOString(),
      new Date(start + 2 * HOUR).toISOString(),
    ]);
  });
});
