/**
 * The POLLERS the workerd tests run with (passed as a JSON binding by vitest.config.ts).
 * Each test creates its own Durable Object and names one of these configs in its calls.
 * Outbound requests go to in-process fakes installed by test/workers/fakes.ts.
 */
const seedSource = {
  url: 'https://upstream.test/v1/sessions',
  from_param: 'date_from',
  items: 'sessions',
  params: { per_page: '3' },
  headers: { Authorization: 'Bearer ${UPSTREAM_TOKEN}' },
  timeout: '5s',
  next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
};

const webhook = {
  type: 'webhook',
  url: 'https://receiver.test/hooks',
  secret: '${WEBHOOK_SECRET}',
};

export const TEST_POLLERS = {
  seed: { cron: '* * * * *', source: seedSource, deliver: webhook },
  lagging: { cron: '* * * * *', lag_allowance: '2s', source: seedSource, deliver: webhook },
  bounded: {
    cron: '*/5 * * * *',
    max_window: '1h',
    source: { ...seedSource, to_param: 'date_to' },
    deliver: webhook,
  },
  tiny_budget: {
    cron: '*/5 * * * *',
    max_window: '1h',
    max_subrequests: 8,
    source: { ...seedSource, to_param: 'date_to' },
    deliver: webhook,
  },
  handled: {
    cron: '*/5 * * * *',
    source: seedSource,
    deliver: { type: 'handler', name: 'demo-sessions' },
  },
  broken: {
    cron: '* * * * *',
    lease_ttl: '5m',
    max_run: '10m',
    source: seedSource,
    deliver: webhook,
  },
  disabled: { cron: '* * * * *', enabled: false, source: seedSource, deliver: webhook },
  demo_sessions: {
    cron: '* * * * *',
    lag_allowance: '5s',
    max_window: '1h',
    source: {
      url: 'https://demo.tidemark.internal/demo/sessions',
      service: 'SELF',
      from_param: 'date_from',
      to_param: 'date_to',
      items: 'sessions',
      params: { limit: '50' },
      next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
    },
    deliver: { type: 'handler', name: 'demo-sessions' },
  },
};

export const TEST_SECRETS = {
  ADMIN_TOKEN: 'test-admin-token-5f1c',
  STATUS_TOKEN: 'test-status-token-9a2e',
  UPSTREAM_TOKEN: 'upstream-secret-7d3b',
  WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
};
