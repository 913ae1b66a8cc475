/**
 * Who may call each route of the app, as the tests expect it: the auth matrix
 * (test/workers/auth-matrix.test.ts) checks the app against it, and the route table of
 * docs/operations.md (test/workers/documented-routes.test.ts) is checked against it. A route is `METHOD /path` as
 * Hono registers it (`GET /pollers/:name/runs`). Any route named in neither list below needs
 * ADMIN_TOKEN, so a new route is held to the strictest rule until someone says otherwise.
 */
export type Access = 'public' | 'nudge' | 'read' | 'admin';

/**
 * Routes that need no bearer token to be reached. Each has its own test of what it shows
 * without one (operations, dashboard, health, nudge tests).
 */
export const PUBLIC_ROUTES: Readonly<Record<string, 'public' | 'nudge'>> = {
  'GET /': 'public', // the dashboard's overview page, with no data in it
  'GET /dashboard/pollers/:name': 'public', // one poller's page, the same for every name
  'GET /healthz': 'public', // ok / not ok and a count; names only to a reader
  'POST /pollers/:name/nudge': 'nudge', // ADMIN_TOKEN or the poller's NUDGE_TOKEN, else 401
  'POST /demo/oauth/token': 'public', // the demo OAuth provider: its client authenticates itself
};

/**
 * Routes that take STATUS_TOKEN or ADMIN_TOKEN (or public_status), each with a request a
 * reader gets a 200 for.
 */
export const READ_ROUTES: Readonly<Record<string, string>> = {
  'GET /dashboard/panel': '/dashboard/panel',
  'GET /dashboard/pollers/:name/panel': '/dashboard/pollers/seed/panel',
  'GET /metrics': '/metrics',
  'GET /openapi.json': '/openapi.json',
  'GET /status': '/status',
  'GET /status/:poller': '/status/seed',
  'GET /pollers': '/pollers',
  'GET /pollers/deletions': '/pollers/deletions',
  'GET /pollers/:name/config': '/pollers/seed/config',
  'GET /pollers/:name/runs': '/pollers/seed/runs',
  // Run 1 exists once the poller has run (the auth matrix runs `seed` first).
  'GET /pollers/:name/runs/:id': '/pollers/seed/runs/1',
  'GET /demo/sessions': '/demo/sessions?date_from=2026-01-01T00:00:00Z',
  'GET /demo/sessions/deleted': '/demo/sessions/deleted?date_from=2026-01-01T00:00:00Z',
  'GET /demo/sessions/all': '/demo/sessions/all',
  'GET /demo/audit': '/demo/audit?poller=seed',
};

/** What a route needs: public, the nudge route's own rule, read, or else admin. */
export function accessOf(route: string): Access {
  return PUBLIC_ROUTES[route] ?? (route in READ_ROUTES ? 'read' : 'admin');
}

/**
 * The app's own routes (`app.routes`), once each. Hono lists its middleware (`use`) with the
 * method ALL, and a route once per handler in its chain: both are left out or folded.
 */
export function appRoutes(routes: readonly { method: string; path: string }[]): string[] {
  const all = routes.filter((route) => route.method !== 'ALL');
  return [...new Set(all.map((route) => `${route.method} ${route.path}`))];
}

/** A value for each path parameter: `seed` is a static test poller (test/support/pollers.ts). */
const SAMPLE_PARAMS: Readonly<Record<string, string>> = {
  key: 'no-such-dead-letter',
  id: '1',
  secret: 'SOME_SECRET',
};

/** A concrete path for a route's pattern: `/pollers/:name/runs` → `/pollers/seed/runs`. */
export function concretePath(route: string): string {
  const path = route.slice(route.indexOf(' ') + 1);
  return path
    .replace(/:(\w+)(\{[^}]*\})?\??/g, (_, name: string) => SAMPLE_PARAMS[name] ?? 'seed')
    .replaceAll('*', 'x');
}
