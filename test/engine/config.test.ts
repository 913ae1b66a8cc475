import { describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import { parseDuration } from '../../src/config/duration.ts';
import { loadPoller, loadPollers } from '../../src/config/load.ts';
import { deliveryKinds } from '../../src/delivery/kinds/index.ts';

const ENV = { UPSTREAM_TOKEN: 'tok-123', WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };

/** A minimal valid poller, with overrides. */
function poller(overrides: Record<string, unknown> = {}) {
  return {
    cron: '*/5 * * * *',
    source: {
      url: 'https://api.example.com/v1/sessions',
      from_param: 'date_from',
      items: 'sessions',
      headers: { Authorization: 'Bearer ${UPSTREAM_TOKEN}' },
      next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
    },
    deliver: { type: 'webhook', url: 'https://example.com/hooks', secret: '${WEBHOOK_SECRET}' },
    ...overrides,
  };
}

function errorsOf(raw: unknown, env: Record<string, unknown> = ENV): string[] {
  const entry = loadPoller('sessions', raw, env);
  return entry.ok ? [] : entry.errors;
}

describe('POLLERS: defaults', () => {
  it('accepts a minimal poller and fills every default', () => {
    const entry = loadPoller('sessions', poller(), ENV);
    expect(entry.ok).toBe(true);
    if (!entry.ok) return;
    expect(entry.config).toMatchObject({
      enabled: true,
      lease_ttl: 15 * 60_000,
      max_run: 10 * 60_000,
      lag_allowance: 0,
      overlap: 0,
      max_rate_limit_wait: 60 * 60_000,
      max_attempts: 5,
      dead_letter_retention: 14 * 24 * 60 * 60_000,
      alert_after: 30 * 60_000,
      max_subrequests: 1000,
      source: {
        time_format: 'iso',
        id: 'id',
        updated_at: 'updated_at',
        params: {},
        timeout: 30_000,
        max_body: 16 * 1024 * 1024,
      },
      deliver: { batch: 1, timeout: 30_000 },
    });
    expect(entry.config.start_from).toBeUndefined();
    expect(entry.config.max_window).toBeUndefined();
    expect(entry.config.source.headers.Authorization).toBe('Bearer tok-123');
    expect(entry.secrets).toContain('tok-123');
  });

  it('accepts every key of CONFIG.md', () => {
    const full = poller({
      enabled: false,
      start_from: '2026-01-01T00:00:00Z',
      lease_ttl: '15m',
      max_run: '10m',
      lag_allowance: '0s',
      overlap: '0s',
      max_window: '1h',
      max_attempts: 5,
      alert_after: '30m',
      source: {
        url: 'https://api.example.com/v1/sessions',
        from_param: 'date_from',
        to_param: 'date_to',
        time_format: 'iso',
        items: 'sessions',
        id: 'id',
        updated_at: 'updated_at',
        params: { per_page: '100' },
        headers: { Authorization: 'Bearer ${UPSTREAM_TOKEN}' },
        timeout: '30s',
        next: {
          type: 'cursor',
          param: 'cursor',
          path: 'next_cursor',
          stop: 'end_of_stream',
          more: 'has_more',
        },
      },
      deliver: {
        type: 'webhook',
        url: 'https://example.com/hooks',
        secret: '${WEBHOOK_SECRET}',
        batch: 1,
        timeout: '30s',
      },
    });
    expect(errorsOf(full)).toEqual([]);
    const entry = loadPoller('sessions', full, ENV);
    expect(entry.ok && entry.config.start_from).toBe(Date.parse('2026-01-01T00:00:00Z'));
  });

  it('parses durations', () => {
    expect(['500ms', '30s', '15m', '1h', '7d', '1.5h'].map(parseDuration)).toEqual([
      500, 30_000, 900_000, 3_600_000, 604_800_000, 5_400_000,
    ]);
    for (const bad of ['15', 'm', '1 h', '-5m', '1w', ''])
      expect(parseDuration(bad)).toBeUndefined();
  });
});

describe('POLLERS: errors name the poller and the key', () => {
  const cases: [string, unknown, string][] = [
    ['an unknown key', poller({ lease_tll: '15m' }), 'poller "sessions": lease_tll: unknown key'],
    [
      'an unknown nested key',
      poller({ deliver: { type: 'handler', name: 'x', retries: 3 } }),
      'poller "sessions": deliver.retries: unknown key',
    ],
    [
      'a bad duration',
      poller({ max_run: '10 minutes' }),
      'poller "sessions": max_run: "10 minutes" is not a duration',
    ],
    [
      'lease_ttl <= max_run',
      poller({ lease_ttl: '10m', max_run: '10m' }),
      'poller "sessions": lease_ttl: must be greater than max_run plus the longest request timeout and page_delay (10m30s): the lease is the crash-recovery ceiling',
    ],
    [
      'a cron that is not a cron pattern',
      poller({ cron: 'every day at noon' }),
      'poller "sessions": cron: "every day at noon" is not a cron pattern',
    ],
    [
      'neither cron nor every',
      poller({ cron: undefined }),
      'poller "sessions": cron: is required (or `every`)',
    ],
    [
      'both cron and every',
      poller({ every: '15s' }),
      'poller "sessions": every: cannot be set together with cron',
    ],
    [
      'an every under a second',
      poller({ cron: undefined, every: '500ms' }),
      'poller "sessions": every: must be at least 1s',
    ],
    [
      'a key that does not apply to the delivery type',
      poller({ deliver: { type: 'handler', name: 'x', batch: 50, url: 'https://x.example/' } }),
      'poller "sessions": deliver.batch: unknown key; deliver.url: unknown key',
    ],
    [
      'a key that does not apply to the paging type',
      poller({
        source: {
          url: 'https://a.example/x',
          from_param: 'since',
          next: { type: 'link', param: 'page' },
        },
      }),
      'poller "sessions": source.next.param: unknown key',
    ],
    [
      'a lease_ttl that a run can outlive by one request timeout',
      poller({ lease_ttl: '610s', max_run: '10m' }),
      'poller "sessions": lease_ttl: must be greater than max_run plus the longest request timeout',
    ],
    [
      'numbered pages over records sorted oldest first',
      poller({
        source: {
          url: 'https://a.example/x',
          from_param: 'since',
          sorted: 'asc',
          next: { type: 'page', param: 'page' },
        },
      }),
      'poller "sessions": source.sorted: cannot be "asc" with next.type = "page"',
    ],
    [
      'offsets over records sorted oldest first',
      poller({
        source: {
          url: 'https://a.example/x',
          from_param: 'since',
          sorted: 'asc',
          next: { type: 'offset', param: 'offset' },
        },
      }),
      'poller "sessions": source.sorted: cannot be "asc" with next.type = "offset"',
    ],
    [
      'an offset without its param',
      poller({
        source: { url: 'https://a.example/x', from_param: 'since', next: { type: 'offset' } },
      }),
      'poller "sessions": source.next.param: is required when next.type = "offset"',
    ],
    [
      'max_window without to_param',
      poller({ max_window: '1h' }),
      'poller "sessions": max_window: needs source.to_param',
    ],
    [
      'a bad start_from',
      poller({ start_from: 'yesterday' }),
      'poller "sessions": start_from: "yesterday" is not an ISO 8601 time',
    ],
    [
      'a cursor without its param',
      poller({
        source: {
          url: 'https://a.example/x',
          from_param: 'since',
          next: { type: 'cursor', path: 'next' },
        },
      }),
      'poller "sessions": source.next.param: is required when next.type = "cursor"',
    ],
    [
      'a webhook without url',
      poller({ deliver: { type: 'webhook', secret: 'whsec_x' } }),
      'poller "sessions": deliver.url: is required when deliver.type = "webhook"',
    ],
    [
      'a bad url',
      poller({ source: { url: 'not a url', from_param: 'since' } }),
      'poller "sessions": source.url:',
    ],
    [
      'a queue delivery without its binding',
      poller({ deliver: { type: 'queue' } }),
      'poller "sessions": deliver.binding: is required when deliver.type = "queue"',
    ],
    [
      'url paging without the body path of the next URL',
      poller({
        source: { url: 'https://a.example/x', from_param: 'since', next: { type: 'url' } },
      }),
      'poller "sessions": source.next.path: is required when next.type = "url"',
    ],
    [
      'an unknown updated_at_format',
      poller({
        source: { url: 'https://a.example/x', from_param: 'since', updated_at_format: 'rfc2822' },
      }),
      'poller "sessions": source.updated_at_format:',
    ],
    [
      'a unix-time window that max_window − overlap cannot move past C',
      poller({
        max_window: '1500ms',
        overlap: '1s',
        source: {
          url: 'https://a.example/x',
          from_param: 'since',
          to_param: 'until',
          time_format: 'unix',
        },
      }),
      'poller "sessions": max_window: must exceed overlap by at least 1s with time_format = "unix"',
    ],
    [
      'a max_body that is not a size',
      poller({ source: { url: 'https://a.example/x', from_param: 'since', max_body: 'lots' } }),
      'poller "sessions": source.max_body: "lots" is not a size',
    ],
    [
      'a max_rate_limit_wait that is not a duration',
      poller({ max_rate_limit_wait: 'forever' }),
      'poller "sessions": max_rate_limit_wait: "forever" is not a duration',
    ],
    [
      'a dead_letter_retention shorter than a minute',
      poller({ dead_letter_retention: '30s' }),
      'poller "sessions": dead_letter_retention: must be at least 1m',
    ],
  ];
  for (const [what, raw, message] of cases) {
    it(`rejects ${what}`, () => {
      expect(errorsOf(raw).join('\n')).toContain(message);
    });
  }

  it('rejects a missing ${SECRET}, naming the variable and never a value', () => {
    const errors = errorsOf(poller(), { WEBHOOK_SECRET: ENV.WEBHOOK_SECRET });
    expect(errors).toEqual([
      'poller "sessions": source.headers.Authorization: ${UPSTREAM_TOKEN} is not set (run `wrangler secret put UPSTREAM_TOKEN`, or add it to .dev.vars locally)',
    ]);
  });

  it('shows a secret in an error as ${NAME}, never its value', () => {
    const errors = errorsOf(poller({ start_from: '${START}' }), { ...ENV, START: 's3cr3t-start' });
    expect(errors.join('\n')).toContain('start_from: "${START}" is not an ISO 8601 time');
    expect(errors.join('\n')).not.toContain('s3cr3t-start');
  });

  it('accepts a unix-time window a whole second longer than the overlap', () => {
    const raw = poller({
      max_window: '2s',
      overlap: '1s',
      source: {
        url: 'https://a.example/x',
        from_param: 'since',
        to_param: 'until',
        time_format: 'unix',
      },
    });
    expect(errorsOf(raw)).toEqual([]);
  });

  it('rejects a bad poller name', () => {
    expect(loadPoller('my poller', poller(), ENV).ok).toBe(false);
  });
});

describe('POLLERS: one bad poller never stops the good ones', () => {
  it('validates each poller on its own', () => {
    const loaded = loadPollers({
      ...ENV,
      POLLERS: { good: poller(), bad: poller({ max_run: 'forever' }) },
    });
    expect(loaded.errors).toEqual([]);
    expect(loaded.pollers.find((p) => p.name === 'good')?.ok).toBe(true);
    expect(loaded.pollers.find((p) => p.name === 'bad')?.ok).toBe(false);
  });

  it('accepts POLLERS as a JSON string (wrangler dev --var POLLERS:…)', () => {
    const loaded = loadPollers({ ...ENV, POLLERS: JSON.stringify({ good: poller() }) });
    expect(loaded.pollers.map((p) => p.ok)).toEqual([true]);
  });

  it('says so when POLLERS is missing or not JSON', () => {
    expect(loadPollers({}).errors[0]).toContain('POLLERS is not set');
    expect(loadPollers({ POLLERS: '{nope' }).errors[0]).toContain('not JSON');
  });
});

describe('wrangler.toml', () => {
  it('declares pollers that are valid, and a watchdog cron', () => {
    const config = unstable_readConfig({ config: 'wrangler.toml' });
    const crons = config.triggers.crons ?? [];
    const secrets = { ...ENV, STATUS_TOKEN: 'set-with-wrangler-secret' };
    expect(crons.length).toBeGreaterThan(0);
    const loaded = loadPollers({ ...(config.vars as Record<string, unknown>), ...secrets });
    expect(loaded.errors).toEqual([]);
    for (const entry of loaded.pollers) expect(entry.ok ? [] : entry.errors).toEqual([]);
    expect(loaded.pollers.map((p) => p.name)).toContain('demo_sessions');
  });
});

describe('examples/wrangler.toml', () => {
  it('configures a Zendesk-, GitHub-, Stripe- and seed-style poller by TOML alone, all valid', () => {
    const config = unstable_readConfig({ config: 'examples/wrangler.toml' });
    const secrets = {
      ZENDESK_TOKEN: 'z',
      GITHUB_TOKEN: 'g',
      STRIPE_KEY: 's',
      SESSIONS_TOKEN: 't',
      WEBHOOK_SECRET: ENV.WEBHOOK_SECRET,
    };
    const loaded = loadPollers({ ...(config.vars as Record<string, unknown>), ...secrets });
    for (const entry of loaded.pollers) expect(entry.ok ? [] : entry.errors).toEqual([]);
    const styles = loaded.pollers.map((entry) => (entry.ok ? entry.config.source.next.type : ''));
    expect(styles.sort()).toEqual(['cursor', 'cursor', 'cursor', 'last_id', 'link', 'url']);
    // Every delivery kind there is has an example poller.
    const deliveries = loaded.pollers.map((entry) => (entry.ok ? entry.config.deliver.type : ''));
    expect(new Set(deliveries)).toEqual(new Set(Object.keys(deliveryKinds)));
  });
});
