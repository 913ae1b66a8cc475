import {
  createExecutionContext,
  createScheduledController,
  runInDurableObject,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import worker from '../../src/index.ts';
import type { Poller } from '../../src/poller/durable-object.ts';
import { watchdog } from '../../src/watchdog/index.ts';
import { api, runtimeConfig, unique } from '../support/fleet.ts';
import { installFakes } from './fakes.ts';
import { disarmStaticPollers, writtenBehindTheStore } from './poller.ts';

beforeEach(() => {
  installFakes();
});

// The watchdog arms every static poller's own ticks: disarmed after each test.
afterEach(disarmStaticPollers);

const objectOf = (name: string) => env.POLLER.get(env.POLLER.idFromName(name));
const statusOf = (name: string) => objectOf(name).status();
const alarmOf = (name: string) =>
  runInDurableObject(objectOf(name), (_instance: Poller, state) => state.storage.getAlarm());

/**
 * Waits, if needed, until the next minute boundary is at least `margin` ms away. A test that
 * books a "* * * * *" tick and then checks that nothing ran must not straddle the boundary:
 * there the booked alarm is due and fires, a run the test did not cause.
 */
async function clearOfMinuteBoundary(margin: number): Promise<void> {
  const untilBoundary = 60_000 - (Date.now() % 60_000);
  if (untilBoundary < margin)
    await new Promise((resolve) => setTimeout(resolve, untilBoundary + 50));
}

describe('scheduled(): the watchdog, now that every poller schedules itself', () => {
  it('books each valid static poller’s own next tick from its cron, and returns without running anything', {
    timeout: 30_000,
  }, async () => {
    await clearOfMinuteBoundary(15_000);
    const controller = createScheduledController({ cron: '* * * * *' });
    const ctx = createExecutionContext();
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);

    // bounded's cron is "*/5 * * * *", seed's "* * * * *": each its own next tick.
    for (const [name, step] of [
      ['bounded', 5 * 60_000],
      ['seed', 60_000],
    ] as const) {
      const status = await statusOf(name);
      expect(status.lease.epoch, name).toBe(0); // nothing ran: the tick is ahead
      const alarm = (await alarmOf(name)) ?? 0;
      expect(alarm % step, name).toBe(0);
      expect(alarm, name).toBeGreaterThan(Date.now());
      expect(alarm, name).toBeLessThanOrEqual(Date.now() + step);
    }
  });

  it('does not let a misconfigured poller stop the good ones, and arms nothing for disabled ones', async () => {
    const report = await watchdog(env);
    expect(report.misconfigured).toContain('broken'); // lease_ttl <= max_run
    expect(report.misconfigured).toContain('needs_secret'); // ${MISSING_TOKEN}
    expect(await alarmOf('broken')).toBeNull();
    expect(await alarmOf('disabled')).toBeNull();
    expect(await alarmOf('lagging')).not.toBeNull();
    const broken = await statusOf('broken');
    expect(broken.config_errors.join('\n')).toContain(
      'poller "broken": lease_ttl: must be greater than max_run plus',
    );
  });

  it('sends a round larger than WATCHDOG_GROUP out in WatchdogShard invocations (ctx.exports), which give lost alarms back', async () => {
    const prefix = unique('shard');
    const names = [0, 1, 2, 3, 4].map((i) => `${prefix}-${i}`);
    for (const name of names) await api('PUT', `/pollers/${name}`, runtimeConfig());
    for (const name of names) {
      await runInDurableObject(objectOf(name), async (instance: Poller, state) => {
        await state.storage.deleteAlarm();
        writtenBehindTheStore(instance);
      });
    }
    const logged = vi.spyOn(console, 'log');
    const ctx = createExecutionContext();
    const grouped: Env = { ...env, WATCHDOG_ROUND: '1', WATCHDOG_GROUP: '2' };
    await worker.scheduled(createScheduledController({ cron: '* * * * *' }), grouped, ctx);
    await waitOnExecutionContext(ctx);

    const lines = logged.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.startsWith('{"event":"watchdog"'))
      .map((line) => JSON.parse(line) as { shards: number; repaired: string[] });
    logged.mockRestore();
    expect(lines.at(-1)?.shards).toBeGreaterThanOrEqual(3);
    expect(lines.at(-1)?.repaired).toEqual(expect.arrayContaining(names));
    for (const name of names) expect(await alarmOf(name), name).not.toBeNull();
    for (const name of names) await api('DELETE', `/pollers/${name}`);
  });

  it('sets a lost alarm again, and a tick that was missed runs at once', async () => {
    await watchdog(env);
    const name = 'lagging';
    // The platform lost the alarm, and the tick it was for has passed.
    await runInDurableObject(objectOf(name), async (instance: Poller, state) => {
      await state.storage.deleteAlarm();
      state.storage.sql.exec('UPDATE poller_state SET next_tick_at = ?', Date.now() - 1_000);
      writtenBehindTheStore(instance);
    });
    expect(await alarmOf(name)).toBeNull();

    const report = await watchdog(env);

    expect(report.repaired).toContain(name);
    // The missed tick runs at once (the platform fires an alarm set in the past), then the
    // next one is booked.
    await vi.waitUntil(async () => (await statusOf(name)).last_run !== null, {
      timeout: 10_000,
      interval: 20,
    });
    expect((await statusOf(name)).last_run?.trigger).toBe('cron');
  });
});
