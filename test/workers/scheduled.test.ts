import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import worker from '../../src/index.ts';
import { dispatchCron } from '../../src/schedule.ts';
import { installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

beforeEach(() => {
  installFakes();
});

// The runs these ticks start go on by alarm: let them finish against the fakes.
afterEach(async () => {
  for (const name of [
    'bounded',
    'tiny_budget',
    'handled',
    'seed',
    'seed_small',
    'lagging',
    'demo_sessions',
  ]) {
    await newPoller(name, name).settle();
  }
});

const statusOf = (name: string) => env.POLLER.get(env.POLLER.idFromName(name)).status(name);

describe('scheduled(): cron → one Durable Object per poller', () => {
  it('triggers each enabled, valid poller whose cron is the controller’s, and returns without waiting for runs', async () => {
    const controller = createScheduledController({ cron: '*/5 * * * *' });
    const ctx = createExecutionContext();
    await worker.scheduled(controller, env, ctx);
    await waitOnExecutionContext(ctx);

    for (const name of ['bounded', 'tiny_budget', 'handled']) {
      const status = await statusOf(name);
      expect(status.lease.epoch, name).toBe(1); // the trigger took the lease
    }
    expect((await statusOf('seed')).lease.epoch).toBe(0); // other cron: untouched
  });

  it('does not let a misconfigured poller stop the good ones, and skips disabled ones', async () => {
    const due = await dispatchCron('* * * * *', env);
    expect(due.sort()).toEqual(['demo_sessions', 'lagging', 'seed', 'seed_small']);
    expect(due).not.toContain('broken'); // lease_ttl <= max_run
    expect(due).not.toContain('disabled');
    expect(due).not.toContain('needs_secret'); // ${MISSING_TOKEN}

    const broken = await statusOf('broken');
    expect(broken.config_errors.join('\n')).toContain(
      'poller "broken": lease_ttl: must be greater than max_run plus',
    );
    expect(broken.lease.epoch).toBe(0);
    expect((await statusOf('lagging')).lease.epoch).toBe(1);
  });

  it('triggers nothing for a cron no poller uses', async () => {
    expect(await dispatchCron('0 3 * * *', env)).toEqual([]);
  });
});
