import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { STATIC_INCARNATION } from '../../src/catalog.ts';
import { app } from '../../src/http/app.ts';
import { runChart } from '../../src/http/dashboard/chart.ts';
import type { RunView } from '../../src/poller/status.ts';
import { call } from '../support/call.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
const { ADMIN_TOKEN, STATUS_TOKEN } = TEST_SECRETS;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

const page = async (name: string, token = ADMIN_TOKEN) => {
  const response = await call('GET', `/dashboard/pollers/${name}/panel`, token);
  expect(response.status).toBe(200);
  return response.text();
};

const overview = async () => (await call('GET', '/dashboard/panel', STATUS_TOKEN)).text();

/** The text of an element found by a pattern, tags stripped, whitespace folded. */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/** The HTML of the table row of the poller page's facts, by its term. */
const fact = (html: string, term: string) =>
  text(new RegExp(`<dt>${term}</dt>\\s*<dd>([\\s\\S]*?)</dd>`).exec(html)?.[1] ?? '');

describe('the poller page', () => {
  it('is served at /dashboard/pollers/:name as a page without data, the same for any name', async () => {
    const known = await call('GET', '/dashboard/pollers/seed');
    expect(known.status).toBe(200);
    const html = await known.text();
    expect(html).toContain('data-panel="/dashboard/pollers/seed/panel"');
    expect(html).toContain('<form id="login">');
    expect(html).not.toContain('upstream.test');
    const unknown = await call('GET', '/dashboard/pollers/nope');
    expect(unknown.status).toBe(200); // no way to learn which pollers exist without a token
    // The JSON admin API under /pollers is untouched.
    const runs = await call('GET', '/pollers/seed/runs', STATUS_TOKEN);
    expect(runs.headers.get('content-type')).toContain('application/json');
  });

  it('says with each panel which token it was read with: admin or read', async () => {
    for (const path of ['/dashboard/panel', '/dashboard/pollers/seed/panel']) {
      const admin = await call('GET', path, ADMIN_TOKEN);
      expect(admin.headers.get('x-tidemark-access')).toBe('admin');
      const reader = await call('GET', path, STATUS_TOKEN);
      expect(reader.headers.get('x-tidemark-access')).toBe('read');
    }
  });

  it('needs a read token for its panel: 401 without one or with a wrong one, 404 for an unknown poller', async () => {
    for (const token of [undefined, 'wrong-token']) {
      expect((await call('GET', '/dashboard/pollers/seed/panel', token)).status).toBe(401);
    }
    expect((await call('GET', '/dashboard/pollers/seed/panel', STATUS_TOKEN)).status).toBe(200);
    expect((await call('GET', '/dashboard/pollers/seed/panel', ADMIN_TOKEN)).status).toBe(200);
    const unknown = await call('GET', '/dashboard/pollers/nope/panel', STATUS_TOKEN);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'no poller "nope" in POLLERS' });
    const open = await app.request(
      '/dashboard/pollers/seed/panel',
      {},
      {
        ...env,
        public_status: true,
      },
    );
    expect(open.status).toBe(200);
  });

  it('shows state and why, checkpoint and lag, lease, next wake-up and why, rate limit, skew, runs and the audit log', async () => {
    const poller = newPoller('retained', 'retained');
    await poller.setCheckpoint(Date.now() - 10 * MINUTE);
    upstream.add('s1', Date.now() - 5 * MINUTE);
    upstream.add('s2', Date.now() - 4 * MINUTE);
    expect((await call('POST', '/pollers/retained/run', ADMIN_TOKEN)).status).toBe(200);
    upstream.respondOnce(
      () => new Response('slow down', { status: 429, headers: { 'retry-after': '120' } }),
    );
    await call('POST', '/pollers/retained/run', ADMIN_TOKEN);

    const html = await page('retained');
    expect(html).toContain('<h2>retained <span class="state failing">failing</span></h2>');
    expect(text(html)).toContain('Failing: 1 failed run in a row; a retry is booked in');
    expect(fact(html, 'Checkpoint')).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ: lag \d+s \(alert_after 30m\)$/,
    );
    expect(fact(html, 'Lease')).toBe('free (epoch 2)');
    expect(fact(html, 'Next wake-up')).toMatch(
      /\(in \d+[sm]\): a retry, backing off after 1 failed run$/,
    );
    expect(fact(html, 'Rate limit')).toMatch(
      /^held off until .+ \(in \d+m?s?\), as the upstream asked$/,
    );
    expect(fact(html, 'Upstream clock')).toBe('not measured yet');
    expect(fact(html, 'Schedule')).toBe('*/10 * * * *');

    const rows = [
      ...html.matchAll(/<tr class="run (\w+)" data-outcome="\w+"[^>]*>([\s\S]*?)<\/tr>/g),
    ];
    expect(rows.map((row) => row[1])).toEqual(['failed', 'success']);
    const [failed, success] = rows.map((row) => text(row[2] ?? ''));
    expect(success).toMatch(/^\S+ \S+ 1 manual success 1 1 2 0 [\d.]+ (ms|s) \S+ \S+$/);
    expect(failed).toContain('manual failed');
    // Its error on the row under it, across the table.
    const error = /<tr class="run-error failed"[^>]*>([\s\S]*?)<\/tr>/.exec(html)?.[1] ?? '';
    expect(error).toContain('<td colspan="10" class="error">');
    expect(text(error)).toContain('429');
    expect(html).toContain('<svg class="chart"');
    expect(text(html)).toContain('run by hand: success');
    expect(text(html)).toContain('run by hand: failed');
  });

  it('shows the config as written in POLLERS, secrets as ${NAME}, and no secret value anywhere', async () => {
    for (const name of ['seed', 'keyed', 'needs_secret']) {
      const html = await page(name);
      const config = /<pre class="config">([\s\S]*?)<\/pre>/.exec(html)?.[1] ?? '';
      expect(config).toContain('&quot;secret&quot;: &quot;${WEBHOOK_SECRET}&quot;');
      for (const secret of Object.values(TEST_SECRETS)) {
        expect(html).not.toContain(secret);
        expect(html).not.toContain(encodeURIComponent(secret));
      }
    }
    expect(await page('seed')).toContain(
      '&quot;Authorization&quot;: &quot;Bearer ${UPSTREAM_TOKEN}&quot;',
    );
    expect(await page('keyed')).toContain('api_key=${QUERY_KEY}');
    const misconfigured = await page('needs_secret');
    expect(misconfigured).toContain('class="state misconfigured"');
    expect(text(misconfigured)).toContain(
      'Misconfigured: no run starts until POLLERS is fixed and deployed.',
    );
    expect(misconfigured).toContain('${MISSING_TOKEN} is not set');
  });

  it('carries only the nonce-tagged script and style: no inline style or handler in the shell or a panel', async () => {
    const response = await call('GET', '/dashboard/pollers/seed');
    const nonce = /'nonce-([^']+)'/.exec(
      response.headers.get('content-security-policy') ?? '',
    )?.[1];
    const shell = await response.text();
    expect(shell.match(/<script\b[^>]*>/g)).toEqual([`<script nonce="${nonce}">`]);
    expect(shell.match(/<style\b[^>]*>/g)).toEqual([`<style nonce="${nonce}">`]);
    for (const html of [shell, await page('seed'), await overview()]) {
      expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    }
  });

  it('escapes what it quotes: an admin reason is text, not markup', async () => {
    await call('POST', '/pollers/lagging/pause', ADMIN_TOKEN, '{"reason":"<img src=x>"}');
    const html = await page('lagging');
    expect(html).not.toContain('<img src=x>');
    expect(html).toContain('paused: “&lt;img src=x&gt;”');
    expect(text(html)).toContain('Paused by an admin at');
  });
});

describe('dead letters on the dashboard', () => {
  it('lists them for an admin with Replay, Discard and Replay all, shows a warning, not ok, and drops each replayed or discarded one', async () => {
    const poller = newPoller('one_attempt', 'one_attempt'); // max_attempts = 1
    await poller.setCheckpoint(Date.now() - 10 * MINUTE);
    upstream.add('d1', Date.now() - 5 * MINUTE);
    upstream.add('d2', Date.now() - 4 * MINUTE);
    upstream.add('ok', Date.now() - 3 * MINUTE);
    receiver.fail('d1', 500);
    receiver.fail('d2', 422);
    expect((await call('POST', '/pollers/one_attempt/run', ADMIN_TOKEN)).status).toBe(200);
    expect((await poller.status()).state).toBe('warning');

    const html = await page('one_attempt');
    expect(html).toContain('<span class="state warning">warning</span>');
    expect(html).not.toContain('class="state ok"');
    const rows = [...html.matchAll(/<tr data-key="([^"]+)">([\s\S]*?)<\/tr>/g)];
    expect(rows.map((row) => text(row[2] ?? '').split(' ')[0])).toEqual(['d1', 'd2']);
    const first = rows[0]?.[2] ?? '';
    expect(first).toContain('data-action="replay" data-poller="one_attempt"');
    expect(first).toContain('data-action="discard" data-poller="one_attempt"');
    expect(text(first)).toContain('HTTP 500');
    expect(text(first)).toMatch(
      / 1 \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ /,
    );
    expect(html).toContain('data-action="replay-all" data-poller="one_attempt" data-count="2"');
    expect(text(html)).toContain('2 dead letters waiting');
    const row = (await overview()).split('<tr data-poller="one_attempt">')[1] ?? '';
    expect(row).toContain('class="state warning"');
    expect(row).toContain('href="/dashboard/pollers/one_attempt#dead-letters">2</a>');

    const [d1, d2] = rows.map((match) =>
      encodeURIComponent((match[1] ?? '').replaceAll('&amp;', '&')),
    );
    const replay = await call(
      'POST',
      `/pollers/one_attempt/dead-letters/${d1}/replay`,
      ADMIN_TOKEN,
    );
    expect(replay.status).toBe(200);
    expect(await page('one_attempt')).not.toContain(`data-key="${rows[0]?.[1]}"`);
    const discard = await call(
      'DELETE',
      `/pollers/one_attempt/dead-letters/${d2}`,
      ADMIN_TOKEN,
      '{"reason":"bad record upstream"}',
    );
    expect(discard.status).toBe(200);
    const after = await page('one_attempt');
    expect(after).not.toContain('<tr data-key=');
    expect(after).toContain('<span class="state ok">ok</span>');
    expect(text(after)).toContain('replayed and delivered');
    expect(text(after)).toContain('discarded: “bad record upstream”');
  });

  it('shows a reader only how many wait: the list needs ADMIN_TOKEN', async () => {
    const poller = newPoller('crowded', 'crowded');
    await poller.stub().queueDeadLetter(STATIC_INCARNATION, {
      key: 'crowded:c1:2026-01-01T00:00:00Z',
      id: 'c1',
      version: '2026-01-01T00:00:00Z',
      record: '{"id":"c1"}',
      attempts: 5,
      at: Date.now() - MINUTE,
    });
    const html = await page('crowded', STATUS_TOKEN);
    expect(html).not.toContain('<tr data-key=');
    expect(html).not.toContain('data-action="replay"');
    expect(text(html)).toContain('1 dead letter waiting. Dead letters hold whole records');
    expect(await page('crowded', ADMIN_TOKEN)).toContain(
      '<tr data-key="crowded:c1:2026-01-01T00:00:00Z">',
    );
  });
});

describe('the overview', () => {
  it('after Resume shows no stale "the poller is paused" as the last run', async () => {
    const poller = newPoller('seed', 'seed');
    await poller.setCheckpoint(Date.now() - MINUTE);
    await call('POST', '/pollers/seed/run', ADMIN_TOKEN);
    await call('POST', '/pollers/seed/pause', ADMIN_TOKEN);
    expect((await call('POST', '/pollers/seed/run', ADMIN_TOKEN)).status).toBe(409); // skipped
    expect((await poller.status()).last_run?.error).toContain('the poller is paused');
    await call('POST', '/pollers/seed/resume', ADMIN_TOKEN);

    const row = (await overview()).split('<tr data-poller="seed">')[1]?.split('</tr>')[0] ?? '';
    expect(row).toContain('class="state ok"');
    expect(row).not.toContain('paused');
    expect(text(row)).toMatch(/success · 0 records · \d+s ago/);
    expect(row).toContain('data-action="pause"');
    // The skipped trigger stays in the history, as a note rather than an error.
    const skipped =
      /<tr class="run-error skipped"[\s\S]*?<\/tr>/.exec(await page('seed'))?.[0] ?? '';
    expect(skipped).toMatch(
      /<td colspan="10" class="muted"><span class="error-text">the poller is paused/,
    );
  });

  it('links each poller to its page and tells the next wake-up and why', async () => {
    const html = await overview();
    const row = html.split('<tr data-poller="bounded">')[1]?.split('</tr>')[0] ?? '';
    expect(row).toContain('<a href="/dashboard/pollers/bounded"><strong>bounded</strong></a>');
    expect(text(row)).toContain('the next cron tick (*/5 * * * *)');
    const disabled = html.split('<tr data-poller="disabled">')[1]?.split('</tr>')[0] ?? '';
    expect(text(disabled)).toContain('nothing: disabled in POLLERS');
  });
});

describe('the run chart', () => {
  const run = (minutesAgo: number, outcome: string, records: number, lagSeconds: number) => {
    const finished = Date.UTC(2026, 0, 1, 12, 0) - minutesAgo * MINUTE;
    return {
      id: 100 - minutesAgo,
      epoch: 1,
      trigger: 'cron',
      outcome,
      started_at: new Date(finished - 1000).toISOString(),
      finished_at: new Date(finished).toISOString(),
      windows: 1,
      pages: 1,
      records,
      dead_lettered: 0,
      error: outcome === 'failed' ? 'HTTP 503 from the upstream' : null,
      checkpoint: new Date(finished - lagSeconds * 1000).toISOString(),
    } satisfies RunView;
  };
  // Newest first, as the run history comes.
  const runs = [
    run(0, 'success', 12, 20),
    run(10, 'failed', 0, 1000),
    run(20, 'skipped', 0, 0),
    run(30, 'success', 40, 30),
  ];

  it('puts time on the x axis and labels the lag and records axes', async () => {
    const svg = (await runChart(runs, 30 * MINUTE)).toString();
    const titles = [...svg.matchAll(/<text class="axis-title"[^>]*>([^<]+)<\/text>/g)].map(
      (match) => match[1],
    );
    expect(titles).toEqual(['lag', 'records per run', 'time (UTC)']);
    const times = [...svg.matchAll(/<text class="tick time-tick"[^>]*>([^<]+)<\/text>/g)].map(
      (match) => match[1],
    );
    expect(times).toEqual(['11:30', '11:40', '11:50', '12:00']);
    const lagTicks = [...svg.matchAll(/<text class="tick lag-tick"[^>]*>([^<]+)<\/text>/g)];
    expect(lagTicks.map((match) => match[1])).toEqual(['0s', '30m', '1h']);
    const recordTicks = [...svg.matchAll(/<text class="tick records-tick"[^>]*>([^<]+)<\/text>/g)];
    expect(recordTicks.map((match) => match[1])).toEqual(['0', '25', '50']);
    expect(svg).toContain('data-runs="3"'); // the skipped trigger is not a run
  });

  it('marks failed runs and draws the alert_after threshold', async () => {
    const svg = (await runChart(runs, 30 * MINUTE)).toString();
    expect(svg).toContain('data-failed="1"');
    expect(svg.match(/<g class="failed" data-outcome="failed">/g)).toHaveLength(1);
    expect(svg).toContain(
      '<title>failed run, 2026-01-01 11:50:00Z: HTTP 503 from the upstream</title>',
    );
    const threshold =
      /<g class="threshold"><line x1="(\d+)" x2="(\d+)" y1="([\d.]+)" y2="([\d.]+)" \/>/.exec(svg);
    expect(threshold).not.toBeNull();
    // 30m on an axis up to 1h: halfway up the plot (24 to 186).
    expect(Number(threshold?.[3])).toBeCloseTo(105, 0);
    expect(svg).toContain('>alert_after 30m</text>');
    expect(svg).not.toMatch(/\sstyle=/);
  });

  it('keeps the time ticks apart when the runs are seconds apart', async () => {
    const close = [
      run(0, 'success', 1, 5),
      { ...run(0, 'failed', 0, 6), finished_at: '2026-01-01T11:59:59.000Z' },
    ];
    const svg = (await runChart(close, 30 * MINUTE)).toString();
    const times = [...svg.matchAll(/<text class="tick time-tick"[^>]*>([^<]+)<\/text>/g)].map(
      (match) => match[1],
    );
    expect(times).toEqual(['11:59:29', '11:59:49', '12:00:09', '12:00:29']);
  });

  it('says so when there is no run yet, and draws no threshold without a valid config', async () => {
    expect((await runChart([], 30 * MINUTE)).toString()).toContain('No runs yet.');
    expect((await runChart(runs, null)).toString()).not.toContain('class="threshold"');
  });
});
