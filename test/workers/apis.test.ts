import { beforeEach, describe, expect, it } from 'vitest';
import { FakeGitHub, FakeStripe, FakeZendesk } from './apis.ts';
import { type FakeReceiver, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Whole seconds, as these APIs stamp their records. */
const second = (ms: number) => Math.floor(ms / 1000) * 1000;

let zendesk: FakeZendesk;
let github: FakeGitHub;
let stripe: FakeStripe;
let receiver: FakeReceiver;

beforeEach(() => {
  zendesk = new FakeZendesk();
  github = new FakeGitHub();
  stripe = new FakeStripe();
  ({ receiver } = installFakes({
    'acme.zendesk.test': zendesk,
    'api.github.test': github,
    'api.stripe.test': stripe,
  }));
});

const styles = [
  { name: 'zendesk', api: () => zendesk },
  { name: 'github', api: () => github },
  { name: 'stripe', api: () => stripe },
] as const;

for (const style of styles) {
  describe(`${style.name}-style API through a real poller`, () => {
    it('pages through a window and delivers ties split across pages exactly once', async () => {
      const api = style.api();
      const poller = newPoller(style.name);
      const start = second(Date.now() - 2 * HOUR);
      await poller.setCheckpoint(start);
      const tie = start + 30 * MINUTE;
      for (const id of ['101', '102', '103', '104', '105']) api.add(id, tie); // one timestamp, two pages
      api.add('106', start); // exactly at the checkpoint: inclusive
      api.add('107', start + HOUR);
      api.add('108', start + 90 * MINUTE);

      await poller.tick();

      const status = await poller.status();
      expect(status.last_run?.outcome).toBe('success');
      expect(status.state).toBe('ok');
      expect(receiver.ids().sort()).toEqual([
        '101',
        '102',
        '103',
        '104',
        '105',
        '106',
        '107',
        '108',
      ]);
      expect(status.last_run?.pages).toBeGreaterThanOrEqual(3);
      expect(await poller.checkpoint()).toBeGreaterThan(start + 90 * MINUTE);

      // The next window starts at the new checkpoint: a tie there is asked for again but
      // delivered once.
      const checkpoint = (await poller.checkpoint()) ?? 0;
      api.add('109', second(checkpoint));
      await poller.tick();
      await poller.tick();
      expect(receiver.ids().filter((id) => id === '109')).toHaveLength(1);
      expect(receiver.deliveries).toHaveLength(9);
    });

    it('delivers a three-day downtime backlog in one go', async () => {
      const api = style.api();
      const poller = newPoller(style.name);
      const start = second(Date.now() - 3 * DAY);
      await poller.setCheckpoint(start);
      for (let at = start + 10 * MINUTE; at < Date.now() - MINUTE; at += 40 * MINUTE) {
        api.add(String(api.updates.length + 1000), at);
      }

      await poller.tick();

      expect((await poller.status()).last_run?.outcome).toBe('success');
      expect(receiver.ids().sort()).toEqual(api.updates.map((u) => u.id).sort());
      expect((await poller.runs()).filter((run) => run.trigger === 'cron')).toHaveLength(1);
    });

    it('waits for the Retry-After of a 429 and then delivers', async () => {
      const api = style.api();
      const poller = newPoller(style.name);
      await poller.setCheckpoint(second(Date.now() - HOUR));
      api.add('201', second(Date.now() - 30 * MINUTE));
      api.respondOnce(
        () =>
          new Response('{"error":"slow down"}', { status: 429, headers: { 'retry-after': '90' } }),
      );

      await poller.tick();
      let status = await poller.status();
      expect(status.last_run?.error).toContain('HTTP 429 (rate limited)');
      expect(Date.parse(status.rate_limited_until ?? '')).toBeGreaterThanOrEqual(
        Date.now() + 89_000,
      );
      expect(Date.parse(status.next_alarm_at ?? '')).toBeGreaterThanOrEqual(Date.now() + 89_000);
      const requests = api.requests.length;
      expect(await poller.trigger()).toMatchObject({ outcome: 'skipped', reason: 'backing_off' });
      expect(api.requests.length).toBe(requests);

      await poller.retryNow();
      status = await poller.status();
      expect(status.last_run?.outcome).toBe('success');
      expect(status.rate_limited_until).toBeNull();
      expect(receiver.ids()).toEqual(['201']);
    });
  });
}

describe('zendesk-style url paging', () => {
  it('follows a relative next_page URL', async () => {
    zendesk.relativeLinks = true;
    const poller = newPoller('zendesk');
    await poller.setCheckpoint(second(Date.now() - HOUR));
    for (let i = 0; i < 7; i += 1)
      zendesk.add(String(300 + i), second(Date.now() - 50 * MINUTE + i * MINUTE));
    await poller.tick();
    expect(receiver.deliveries).toHaveLength(7);
    expect(zendesk.requests.length).toBe(3);
    expect(zendesk.requests[1]?.searchParams.get('cursor')).not.toBeNull();
  });

  it('refuses a next page on another origin, so the credentials never leave', async () => {
    const poller = newPoller('zendesk');
    await poller.setCheckpoint(second(Date.now() - HOUR));
    zendesk.respondOnce(() =>
      Response.json({
        tickets: [{ id: 1, updated_at: new Date(second(Date.now() - MINUTE)).toISOString() }],
        next_page: 'https://evil.test/steal?cursor=2',
        end_of_stream: false,
      }),
    );
    await poller.tick();
    const status = await poller.status();
    expect(status.last_run?.error).toContain(
      'refused to follow the next page to https://evil.test',
    );
    expect(status.state).toBe('misconfigured');
    expect(zendesk.requests).toHaveLength(1);
  });
});

describe('zendesk: the changes of the last minute come later', () => {
  it("loses no ticket changed 30 s before a run: it shows up a minute after its change, and the next window still starts below it (the example's lag_allowance)", async () => {
    const poller = newPoller('zendesk');
    await poller.setCheckpoint(second(Date.now() - HOUR));
    zendesk.add('1', second(Date.now() - 10 * MINUTE));
    zendesk.add('2', second(Date.now() - 30_000)); // hidden from the first run

    await poller.tick();
    expect(receiver.ids()).toEqual(['1']);

    zendesk.clockAhead = 5 * MINUTE; // the next tick, five minutes later upstream
    await poller.tick();

    expect(receiver.ids()).toEqual(['1', '2']);
  });
});

describe('github-style rate limits', () => {
  it('pauses the window when the quota is spent and resumes at the reset', async () => {
    const poller = newPoller('github');
    await poller.setCheckpoint(second(Date.now() - HOUR));
    for (let i = 0; i < 6; i += 1)
      github.add(String(400 + i), second(Date.now() - 50 * MINUTE + i * MINUTE));
    const reset = Math.floor(Date.now() / 1000) + 600;
    github.headers = { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) };

    await poller.tick();
    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('continued');
    expect(status.last_run?.error).toContain('rate limit is spent until');
    expect(status.rate_limited_until).toBe(new Date(reset * 1000).toISOString());
    expect(status.next_alarm_at).toBe(new Date(reset * 1000).toISOString());
    expect(github.requests).toHaveLength(1); // not one request more before the reset
    expect(receiver.deliveries).toHaveLength(3); // the page it had was delivered
    // A cron tick before the reset is held off too.
    expect(await poller.trigger()).toMatchObject({ outcome: 'skipped', reason: 'backing_off' });
    expect(github.requests).toHaveLength(1);

    github.headers = {};
    await poller.retryNow();
    expect((await poller.status()).last_run?.outcome).toBe('success');
    expect(receiver.deliveries).toHaveLength(6);
  });

  it('treats a 403 with a spent quota as a rate limit, not a configuration error', async () => {
    const poller = newPoller('github');
    const reset = Math.floor(Date.now() / 1000) + 300;
    github.respondOnce(
      () =>
        new Response('{"message":"API rate limit exceeded"}', {
          status: 403,
          headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
        }),
    );
    await poller.tick();
    const status = await poller.status();
    expect(status.state).toBe('failing');
    expect(status.rate_limited_until).toBe(new Date(reset * 1000).toISOString());
    expect(Date.parse(status.next_alarm_at ?? '')).toBeGreaterThanOrEqual(reset * 1000);
  });
});

describe('windows too big for one run', () => {
  it('commits progress through a huge window when the upstream is sorted oldest first', async () => {
    const poller = newPoller('github_small'); // max_subrequests 6, sorted asc, no to_param
    const start = second(Date.now() - 2 * HOUR);
    await poller.setCheckpoint(start);
    for (let i = 0; i < 20; i += 1) github.add(String(500 + i), start + i * 5 * MINUTE);

    await poller.tick();

    const runs = (await poller.runs()).reverse();
    expect(runs[0]).toMatchObject({ trigger: 'cron', outcome: 'continued' });
    expect(runs[0]?.checkpoint ?? 0).toBeGreaterThan(start); // progress committed mid-window
    expect(runs.at(-1)?.outcome).toBe('success');
    expect(receiver.ids().sort()).toEqual(github.updates.map((u) => u.id).sort());
    expect(new Set(receiver.ids()).size).toBe(receiver.deliveries.length);
  });

  it('says what to configure when a window that is not sorted cannot finish in one run', async () => {
    const { upstream } = installFakes();
    const poller = newPoller('seed_small'); // max_subrequests 4, per_page 3, unsorted, open window
    const start = Date.now() - HOUR;
    await poller.setCheckpoint(start);
    // Seven pages that are all already delivered would only be fetched again and again.
    for (let i = 0; i < 21; i += 1) upstream.add(`x${i}`, start + i * MINUTE);

    await poller.tick();

    const status = await poller.status();
    expect(status.state).toBe('misconfigured');
    expect(status.last_run?.outcome).toBe('failed');
    expect(status.last_run?.error).toContain('is too big for one run');
    expect(status.last_run?.error).toContain('set source.sorted = "asc"');
    expect(status.last_run?.error).toContain('set source.to_param and max_window');
    expect(await poller.checkpoint()).toBe(start);
    expect(Date.parse(status.next_alarm_at ?? '')).toBeGreaterThan(Date.now() + 29 * MINUTE);
  });
});

describe('a 30-day backlog', () => {
  it('catches up by continuation alone, window by window, on a steady stream', async () => {
    const poller = newPoller('stripe'); // max_window 1h, max_subrequests 1000
    const start = second(Date.now() - 30 * DAY);
    await poller.setCheckpoint(start);
    for (let at = start + 7 * MINUTE; at < Date.now() - MINUTE; at += 45 * MINUTE) {
      stripe.add(`evt_${stripe.updates.length}`, at);
    }

    await poller.tick();

    const runs = (await poller.runs()).reverse();
    expect(runs.filter((r) => r.trigger === 'cron')).toHaveLength(1);
    expect(runs.filter((r) => r.trigger === 'continuation').length).toBeGreaterThan(0);
    expect(runs.every((r) => r.outcome === 'continued' || r.outcome === 'success')).toBe(true);
    expect(runs.at(-1)?.outcome).toBe('success');
    expect(runs.reduce((sum, r) => sum + r.windows, 0)).toBeGreaterThanOrEqual(30 * 24);
    expect(new Set(receiver.ids()).size).toBe(stripe.updates.length);
    expect(receiver.deliveries).toHaveLength(stripe.updates.length);
    const lag = Date.now() - ((await poller.checkpoint()) ?? 0);
    expect(lag).toBeLessThan(MINUTE);
    // Window ends were sent as whole seconds, and C never passed one it had not sent.
    for (const url of stripe.requests) expect(url.searchParams.get('created[lt]')).toMatch(/^\d+$/);
  });
});
