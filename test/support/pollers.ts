/**
 * The POLLERS the workerd tests run with (passed as a JSON binding by vitest.config.ts).
 * Each test creates its own Durable Object and names one of these configs in its calls.
 * Outbound requests go to in-process fakes installed by test/workers/fakes.ts.
 */
import { hubspotSearchSource, notionQuerySource } from './search-apis.ts';

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

const auth = { Authorization: 'Bearer ${UPSTREAM_TOKEN}' };

/** Zendesk-like: unix start_time, next_page URL with end_of_stream, oldest first. */
const zendeskSource = {
  url: 'https://acme.zendesk.test/api/v2/incremental/tickets/cursor.json',
  from_param: 'start_time',
  time_format: 'unix',
  items: 'tickets',
  sorted: 'asc',
  headers: auth,
  next: { type: 'url', path: 'next_page', stop: 'end_of_stream' },
};

/** GitHub-like: ISO since, a bare array, Link rel="next", oldest first. */
const githubSource = {
  url: 'https://api.github.test/repos/acme/app/issues',
  from_param: 'since',
  items: '',
  sorted: 'asc',
  params: { state: 'all', sort: 'updated', direction: 'asc', per_page: '3' },
  headers: auth,
  next: { type: 'link' },
};

/** Stripe-like: created[gte]/created[lt] in unix seconds, newest first, starting_after + has_more. */
const stripeSource = {
  url: 'https://api.stripe.test/v1/events',
  from_param: 'created[gte]',
  to_param: 'created[lt]',
  time_format: 'unix',
  items: 'data',
  updated_at: 'created',
  updated_at_format: 'unix',
  params: { limit: '3' },
  headers: auth,
  next: { type: 'last_id', param: 'starting_after', more: 'has_more' },
};

/**
 * examples/wrangler.toml's lag_allowance for Zendesk (a test checks they agree): Zendesk's
 * export leaves out the last minute's changes, so the checkpoint must stay a minute behind T.
 */
export const ZENDESK_LAG_ALLOWANCE = '90s';

export const TEST_POLLERS = {
  zendesk: {
    cron: '*/5 * * * *',
    lag_allowance: ZENDESK_LAG_ALLOWANCE,
    source: zendeskSource,
    deliver: webhook,
  },
  github: { cron: '*/5 * * * *', lag_allowance: '1s', source: githubSource, deliver: webhook },
  github_small: {
    cron: '*/5 * * * *',
    lag_allowance: '1s',
    max_subrequests: 6,
    source: githubSource,
    deliver: webhook,
  },
  stripe: {
    cron: '*/5 * * * *',
    lag_allowance: '1s',
    max_window: '1h',
    source: stripeSource,
    deliver: webhook,
  },
  poison: { cron: '*/5 * * * *', max_attempts: 3, source: seedSource, deliver: webhook },
  /** Small bodies and a short timeout, for hostile upstreams. */
  capped: {
    cron: '*/5 * * * *',
    source: { ...seedSource, max_body: '2KB', timeout: '300ms' },
    deliver: webhook,
  },
  /** A secret in the query string, with characters a URL encodes (+, /, =, space). */
  keyed: {
    cron: '*/5 * * * *',
    source: { ...seedSource, url: 'https://upstream.test/v1/sessions?api_key=${QUERY_KEY}' },
    deliver: webhook,
  },
  /** Upstreams that redirect (test/support/network.ts): to another origin, and to their own. */
  redirected_away: {
    cron: '*/5 * * * *',
    source: { ...seedSource, url: 'https://upstream.test/redirect-away' },
    deliver: webhook,
  },
  redirected_here: {
    cron: '*/5 * * * *',
    source: { ...seedSource, url: 'https://upstream.test/redirect-here' },
    deliver: webhook,
  },
  /** A budget that runs out in the middle of the second page. */
  budget_five: { cron: '*/5 * * * *', max_subrequests: 5, source: seedSource, deliver: webhook },
  batched: {
    cron: '*/5 * * * *',
    source: { ...seedSource, params: { per_page: '250' } },
    deliver: { ...webhook, batch: 100 },
  },
  ordered: {
    cron: '*/5 * * * *',
    source: { ...seedSource, params: { per_page: '100' } },
    deliver: { ...webhook, concurrency: 6 },
  },
  queued: {
    cron: '*/5 * * * *',
    source: { ...seedSource, params: { per_page: '50' } },
    deliver: { type: 'queue', binding: 'DELIVERY_QUEUE', name: 'demo-sessions', batch: 50 },
  },
  seed_small: { cron: '* * * * *', max_subrequests: 4, source: seedSource, deliver: webhook },
  needs_secret: {
    cron: '* * * * *',
    source: { ...seedSource, headers: { Authorization: 'Bearer ${MISSING_TOKEN}' } },
    deliver: webhook,
  },
  seed: { cron: '* * * * *', source: seedSource, deliver: webhook },
  /** Storage bounds (test/workers/retention.test.ts): a record's first failure dead-letters it. */
  one_attempt: { cron: '*/10 * * * *', max_attempts: 1, source: seedSource, deliver: webhook },
  /** Dead letters kept 7 days instead of the default 14. */
  retained: {
    cron: '*/10 * * * *',
    dead_letter_retention: '7d',
    source: seedSource,
    deliver: webhook,
  },
  /** A poller with far more dead letters than its cap. */
  crowded: { cron: '*/10 * * * *', source: seedSource, deliver: webhook },
  /** Health (test/workers/health.test.ts): one that is never triggered, one with dead letters. */
  never_run: { cron: '*/7 * * * *', source: seedSource, deliver: webhook },
  warned: { cron: '*/10 * * * *', source: seedSource, deliver: webhook },
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
  /** Observed lateness (test/workers/nudge.test.ts): re-reads 10 s below T and 10 s below C. */
  late: {
    cron: '* * * * *',
    lag_allowance: '10s',
    overlap: '10s',
    source: seedSource,
    deliver: webhook,
  },
  /**
   * A static poller on OAuth 2.0 (test/workers/oauth-reconnect.test.ts) against the fake
   * provider on login.test; its client secret and refresh token are its own secrets (or, in a
   * test that builds the object with another env, Worker secrets).
   */
  crm_oauth: {
    cron: '*/10 * * * *',
    source: {
      url: 'https://upstream.test/v1/sessions',
      from_param: 'date_from',
      items: 'sessions',
      next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
      auth: {
        type: 'oauth2',
        token_url: 'https://login.test/token',
        client_id: 'crm-client',
        client_secret: '${CRM_CLIENT_SECRET}',
        refresh_token: '${CRM_REFRESH_TOKEN}',
      },
    },
    deliver: webhook,
  },
  /** The window and the cursor in a POST body (test/workers/request-bodies.test.ts). */
  hubspot_search: {
    cron: '*/5 * * * *',
    lag_allowance: '1s',
    max_window: '1d',
    source: hubspotSearchSource,
    deliver: webhook,
  },
  notion_query: {
    cron: '*/5 * * * *',
    lag_allowance: '60s',
    source: notionQuerySource,
    deliver: webhook,
  },
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
      headers: { Authorization: 'Bearer ${STATUS_TOKEN}' },
      next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
      // As in wrangler.toml: the demo upstream's deletions log, and its full listing below.
      deletions: {
        url: 'https://demo.tidemark.internal/demo/sessions/deleted',
        items: 'deleted',
        params: { limit: '50' },
      },
    },
    deliver: { type: 'handler', name: 'demo-sessions' },
    reconcile: {
      every: '2m',
      url: 'https://demo.tidemark.internal/demo/sessions/all',
      updated_at: 'updated_at',
      params: { limit: '50' },
      max_deletes: '75%',
    },
  },
  /**
   * The demo poller as `npm start` runs it with DEMO_OAUTH=1 (scripts/demo-oauth.ts): on
   * `source.auth = oauth2` against the demo's token endpoint. No `service`: the test
   * (test/workers/demo-oauth.test.ts) routes its requests to the Worker with the flag on.
   */
  demo_oauth: {
    cron: '* * * * *',
    lag_allowance: '5s',
    max_window: '1h',
    source: {
      url: 'https://demo.tidemark.internal/demo/sessions',
      from_param: 'date_from',
      to_param: 'date_to',
      items: 'sessions',
      params: { limit: '50' },
      auth: {
        type: 'oauth2',
        token_url: 'https://demo.tidemark.internal/demo/oauth/token',
        client_id: 'tidemark-demo',
        client_secret: '${DEMO_CLIENT_SECRET}',
        refresh_token: '${DEMO_REFRESH_TOKEN}',
      },
      next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
      deletions: {
        url: 'https://demo.tidemark.internal/demo/sessions/deleted',
        items: 'deleted',
        params: { limit: '50' },
      },
    },
    deliver: { type: 'handler', name: 'demo-sessions' },
    reconcile: {
      every: '2m',
      url: 'https://demo.tidemark.internal/demo/sessions/all',
      updated_at: 'updated_at',
      params: { limit: '50' },
      max_deletes: '75%',
    },
  },
};

export const TEST_SECRETS = {
  ADMIN_TOKEN: 'test-admin-token-5f1c',
  STATUS_TOKEN: 'test-status-token-9a2e',
  UPSTREAM_TOKEN: 'upstream-secret-7d3b',
  WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  QUERY_KEY: 'qk+9/Zr',
  SECRETS_KEY: 'test-secrets-key-5b2f-0123456789abcdefghijkl',
  /** The demo OAuth provider's client secret, and the refresh token the demo_oauth poller starts from. */
  DEMO_CLIENT_SECRET: 'demo-client-secret-3c7a',
  DEMO_REFRESH_TOKEN: 'demo-refresh-initial-8e41',
};
