import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { MemoryFreshness } from '../../src/engine/memory-freshness.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { PageResult, RunContext, RunRecord } from '../../src/engine/ports.ts';

const START = Date.parse('2026-06-01T00:00:00Z');

function configWith(overrides: Record<string, unknown> = {}) {
  const entry = loadPoller(
    'nudged',
    {
      cron: '0 0 1 1 *', // its own ticks are not what these tests are about
      start_from: new Date(START - 60_000).toISOString(),
      lag_allowance: '2s',
      source: { url: 'https://upstream.test/x', from_param: 'from' },
      deliver: { type: 'handler', name: 'x' },
      ...overrides,
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry.config;
}

/**
 * One poller on a fake clock: an upstream that answers an empty page (or holds the page open
 * while `hold` is set, so a run stays "running"), the alarm as a time the test fires itself.
 */
function harness(overrides: Record<string, unknown> = {}) {
  const clock = { now: START };
  const store = new MemoryStore();
  const freshness = new MemoryFreshness();
  let alarmAt: number | null = null;
  let release: (() => void) | null = null;
  const hold = { on: false };
  const pages: number[] = [];
  const logs: Record<string, unknown>[] = [];
  const source = {
    async fetchPage(): Promise<PageResult> {
      pages.push(clock.now);
      if (hold.on) await new Promise<void>((resolve) => (release = resolve));
      return { ok: true, updates: [], malformed: [], next: null };
    },
  };
  const context: RunContext = {
    poller: 'nudged',
    config: configWith(overrides),
    store,
    freshness,
    source,
    deliverer: { deliver: async () => ({ kind: 'delivered' }) },
    now: () => clock.now,
    random: () => 0.5,
    log: (line) => logs.push(line),
  };
  const engine = new PollerEngine(context, {
    set: async (at) => {
      alarmAt = at;
    },
  });
  /** Runs started (not skipped), in order. */
  const runs = (): RunRecord[] => store.runs.filter((run) => run.outcome !== 'skipped');
  return {
    clock,
    store,
    freshness,
    engine,
    pages,
    logs,
    hold,
    runs,
    alarmAt: () => alarmAt,
    /** Lets a held page go. */
    release() {
      hold.on = false;
      release?.();
      release = null;
    },
    /** Fires the alarm while it is due by `until`, moving the clock to each alarm's time. */
    async advanceTo(until: number) {
      for (let step = 0; step < 10_000; step += 1) {
        const due = alarmAt;
        if (due === null || due > until) break;
        clock.now = Math.max(clock.now, due);
        await engine.onAlarm();
      }
      clock.now = Math.max(clock.now, until);
    },
  };
}

describe('a nudge starts a run within about a second', () => {
  it('on an idle poller: the alarm is set for now, and the run it starts is a "nudge" run', async () => {
    const h = harness();
    const reply = await h.engine.nudge();
    expect(reply).toEqual({ outcome: 'scheduled', runAt: START });
    expect(h.alarmAt()).toBe(START);
    await h.advanceTo(START + 1_000);
    expect(h.runs().map((run) => [run.trigger, run.outcome])).toEqual([['nudge', 'success']]);
    expect(h.freshness.nudges()).toMatchObject({ pending: false, received: 1, actedOn: 1 });
  });

  it('never moves the checkpoint by itself: until its run starts, only the pending flag changed', async () => {
    const h = harness();
    await h.engine.trigger('manual');
    await h.advanceTo(START);
    const before = h.store.read();
    h.clock.now += 1_000;
    await h.engine.nudge();
    expect(h.store.read()).toEqual(before);
    expect(h.freshness.nudges()).toMatchObject({ pending: true, since: START + 1_000 });
  });
});

describe('nudges coalesce', () => {
  it('a thousand nudges in one second, the first on an idle poller, cause two runs', async () => {
    const h = harness({ min_interval: '5s' });
    const replies = [];
    for (let i = 0; i < 1_000; i += 1) {
      h.clock.now = START + i;
      replies.push(await h.engine.nudge());
      await h.advanceTo(h.clock.now); // whatever is due runs at once, as the platform would
    }
    await h.advanceTo(START + 10 * 60_000);
    expect(h.runs().map((run) => run.startedAt)).toEqual([START, START + 5_000]);
    expect(replies.filter((reply) => reply.outcome === 'coalesced')).toHaveLength(998);
    expect(h.freshness.nudges()).toMatchObject({
      received: 1_000,
      coalesced: 998,
      actedOn: 2,
      pending: false,
    });
  });

  it("nudges during a run make exactly one more run follow it, booked by the run's end", async () => {
    const h = harness({ min_interval: '5s' });
    h.hold.on = true;
    await h.engine.nudge();
    h.clock.now = START; // the alarm starts the run; its page stays open
    const running = h.engine.onAlarm();
    await Promise.resolve();
    expect(h.store.read().lease).toMatchObject({ held: true, phase: 'running' });
    const during = [];
    for (let i = 1; i <= 500; i += 1) {
      h.clock.now = START + i * 20; // 500 nudges over 10 s, all while the run is going
      during.push((await h.engine.nudge()).outcome);
    }
    expect(during[0]).toBe('after_run');
    expect(during.slice(1).every((outcome) => outcome === 'coalesced')).toBe(true);
    expect(h.alarmAt()).toBe(h.store.read().lease.expiresAt); // the lease's, while it runs (R5)
    h.release();
    await running;
    // Due at once: min_interval after the first run's start has passed.
    expect(h.alarmAt()).toBeLessThanOrEqual(h.clock.now);
    await h.advanceTo(START + 10 * 60_000);
    expect(h.runs()).toHaveLength(2);
    expect(h.freshness.nudges()).toMatchObject({ received: 501, coalesced: 499, actedOn: 2 });
  });

  it('a pending nudge is satisfied by any run that starts after it, a cron tick included', async () => {
    const h = harness({ min_interval: '30s' });
    await h.engine.nudge();
    await h.advanceTo(START); // the nudge's run
    h.clock.now = START + 1_000;
    await h.engine.nudge(); // waits for min_interval: START + 30 s
    h.clock.now = START + 2_000;
    await h.engine.trigger('cron');
    await h.advanceTo(START + 2_000);
    expect(h.freshness.nudges()).toMatchObject({ pending: false, actedOn: 2 });
    expect(h.alarmAt()).toBeNull(); // nothing left to do: no third run at START + 30 s
    expect(h.runs().map((run) => run.trigger)).toEqual(['nudge', 'cron']);
  });
});

describe('min_interval caps how often nudges start runs', () => {
  for (const [minInterval, gap] of [
    ['5s', 5_000],
    ['1m', 60_000],
  ] as const) {
    it(`min_interval = "${minInterval}": a nudge every 100 ms for 10 minutes starts a run every ${minInterval}, no more`, async () => {
      const h = harness({ min_interval: minInterval });
      for (let at = START; at < START + 10 * 60_000; at += 100) {
        await h.advanceTo(at);
        await h.engine.nudge();
      }
      await h.advanceTo(START + 20 * 60_000);
      const starts = h.runs().map((run) => run.startedAt);
      const gaps = starts.slice(1).map((at, i) => at - (starts[i] ?? 0));
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(gap);
      expect(starts.length).toBe(Math.floor((10 * 60_000) / gap) + 1);
    });
  }

  it('defaults to 5s', () => {
    expect(configWith().min_interval).toBe(5_000);
  });

  it('counts from the last run of any kind: a nudge just after a cron run waits', async () => {
    const h = harness({ min_interval: '5s' });
    await h.engine.trigger('cron');
    await h.advanceTo(START);
    h.clock.now = START + 1_000;
    expect(await h.engine.nudge()).toEqual({ outcome: 'scheduled', runAt: START + 5_000 });
    await h.advanceTo(START + 4_999);
    expect(h.runs()).toHaveLength(1);
    await h.advanceTo(START + 5_000);
    expect(h.runs()).toHaveLength(2);
  });
});

describe('nudges never bypass a pause, a backoff or a rate limit', () => {
  it('a paused poller counts the nudge as ignored and starts no run, now or after', async () => {
    const h = harness();
    h.store.state.paused = true;
    expect(await h.engine.nudge()).toEqual({ outcome: 'ignored', reason: 'paused' });
    await h.advanceTo(START + 60 * 60_000);
    expect(h.runs()).toEqual([]);
    expect(h.pages).toEqual([]);
    expect(h.freshness.nudges()).toMatchObject({ received: 1, ignored: 1, pending: false });
  });

  it('a disabled poller too', async () => {
    const h = harness({ enabled: false });
    expect(await h.engine.nudge()).toEqual({ outcome: 'ignored', reason: 'disabled' });
    await h.advanceTo(START + 60 * 60_000);
    expect(h.runs()).toEqual([]);
  });

  it('a booked retry holds the nudge until the retry: the retry is the run it gets', async () => {
    const h = harness();
    h.store.state.wakeup = { at: START + 40_000, reason: 'retry', failure: 'transient' };
    h.store.state.failures = 3;
    expect(await h.engine.nudge()).toEqual({ outcome: 'scheduled', runAt: START + 40_000 });
    await h.advanceTo(START + 39_999);
    expect(h.pages).toEqual([]);
    await h.advanceTo(START + 40_000);
    expect(h.runs().map((run) => run.trigger)).toEqual(['retry']);
    expect(h.freshness.nudges()).toMatchObject({ pending: false, actedOn: 1 });
  });

  it("the upstream's rate limit holds it until the reset", async () => {
    const h = harness();
    h.store.state.rateLimitedUntil = START + 90_000;
    expect(await h.engine.nudge()).toEqual({ outcome: 'scheduled', runAt: START + 90_000 });
    await h.advanceTo(START + 89_999);
    expect(h.pages).toEqual([]);
    await h.advanceTo(START + 90_000);
    expect(h.pages).toEqual([START + 90_000]);
  });
});

describe('what a nudge leaves in the logs', () => {
  it('one line for a nudge that wants a run, none for those folded into it', async () => {
    const h = harness();
    await h.engine.nudge();
    await h.engine.nudge();
    await h.engine.nudge();

    const nudges = h.logs.filter((line) => line.event === 'nudge');
    expect(nudges).toEqual([
      {
        event: 'nudge',
        poller: 'nudged',
        outcome: 'scheduled',
        run_at: new Date(START).toISOString(),
      },
    ]);
  });
});
