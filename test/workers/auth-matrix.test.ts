import { env, exports } from 'cloudflare:workers';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call } from '../support/call.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import {
  accessOf,
  appRoutes,
  concretePath,
  PUBLIC_ROUTES,
  READ_ROUTES,
} from '../support/route-access.ts';
import { app } from '../support/worker.ts';
import { installFakes } from './fakes.ts';

const MINUTE = 60_000;
const { ADMIN_TOKEN, STATUS_TOKEN } = TEST_SECRETS;

beforeEach(() => {
  installFakes();
});

// A run of `seed`, so that the read route of one run has one to show.
beforeAll(async () => {
  installFakes();
  await call('POST', '/pollers/seed/run', ADMIN_TOKEN);
});

/** A route's method and a concrete path for it (`seed` for a poller's name). */
const request = (route: string): [string, string] => [
  route.slice(0, route.indexOf(' ')),
  concretePath(route),
];

/** Every route of the app: one added tomorrow is in this matrix tomorrow. */
const ROUTES = appRoutes(app.routes);
const GUARDED = ROUTES.filter((route) => ['read', 'admin'].includes(accessOf(route)));
const ADMIN = ROUTES.filter((route) => accessOf(route) === 'admin');
const READ = ROUTES.filter((route) => accessOf(route) === 'read');

/** Admin calls that succeed, with what they need: the admin token really opens admin routes. */
const ADMIN_CALLS: [string, string, string?][] = [
  ['POST', '/pollers/lagging/run'],
  ['POST', '/pollers/lagging/pause', '{}'],
  ['POST', '/pollers/lagging/resume'],
  [
    'PUT',
    '/pollers/lagging/checkpoint',
    JSON.stringify({ at: new Date(Date.now() - MINUTE).toISOString(), reason: 'test' }),
  ],
  ['GET', '/pollers/lagging/dead-letters'],
];

describe('the auth matrix, from the app’s own route list', () => {
  it('covers every family of routes, and names no public or read route the app lacks', () => {
    const families = new Set(ROUTES.map((route) => `/${concretePath(route).split('/')[1]}`));
    for (const family of ['/', '/healthz', '/status', '/metrics', '/pollers', '/demo'])
      expect(families).toContain(family);
    for (const route of [...Object.keys(PUBLIC_ROUTES), ...Object.keys(READ_ROUTES)])
      expect(ROUTES, `${route} is listed in test/support/route-access.ts`).toContain(route);
    expect(ADMIN.length).toBeGreaterThan(10);
  });

  for (const route of GUARDED) {
    const [method, path] = request(route);
    it(`${route}: 401 without a token, with a wrong one, or a malformed header`, async () => {
      for (const token of [undefined, 'wrong-token', `${STATUS_TOKEN}x`]) {
        const response = await call(method, path, token);
        expect(response.status, `token ${token}`).toBe(401);
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      const basic = await exports.default.fetch(`https://tidemark.test${path}`, {
        method,
        headers: { authorization: `Basic ${btoa(`admin:${ADMIN_TOKEN}`)}` },
      });
      expect(basic.status).toBe(401);
    });

    it(`${route}: 503 naming the secret to set while its tokens are not set (fail closed)`, async () => {
      const admin = accessOf(route) === 'admin';
      const closed = admin
        ? { ...env, ADMIN_TOKEN: undefined }
        : { ...env, ADMIN_TOKEN: undefined, STATUS_TOKEN: undefined };
      const headers = { authorization: `Bearer ${STATUS_TOKEN}` };
      const response = await app.request(path, { method, headers }, closed);
      expect(response.status).toBe(503);
      expect(await response.text()).toContain(
        `wrangler secret put ${admin ? 'ADMIN_TOKEN' : 'STATUS_TOKEN'}`,
      );
    });
  }

  for (const route of ADMIN) {
    const [method, path] = request(route);
    it(`${route}: 403 with the read-only token, 401 without one even with public_status`, async () => {
      const response = await call(method, path, STATUS_TOKEN);
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('needs ADMIN_TOKEN');
      const open = { ...env, public_status: true };
      expect((await app.request(path, { method }, open)).status).toBe(401);
    });
  }

  for (const route of READ) {
    const path = READ_ROUTES[route] ?? '';
    it(`${route}: 200 with STATUS_TOKEN, with ADMIN_TOKEN, and with public_status and no token`, async () => {
      expect((await call('GET', path, STATUS_TOKEN)).status).toBe(200);
      expect((await call('GET', path, ADMIN_TOKEN)).status).toBe(200);
      const open = { ...env, public_status: true };
      expect((await app.request(path, {}, open)).status).toBe(200);
    });
  }

  for (const [method, path, body] of ADMIN_CALLS) {
    it(`${method} ${path}: 2xx with the admin token`, async () => {
      expect((await call(method, path, ADMIN_TOKEN, body)).status).toBeLessThan(300);
    });
  }
});

describe('the public routes', () => {
  it('serves /healthz without a token, and says only ok / not ok and how many', async () => {
    const health = await call('GET', '/healthz');
    expect([200, 503]).toContain(health.status);
    expect(Object.keys(await health.json()).sort()).toEqual(['status', 'unhealthy']);
  });

  it('serves the dashboard pages without a token, and neither shows data', async () => {
    for (const path of ['/', '/dashboard/pollers/seed']) {
      const page = await call('GET', path);
      expect(page.status, path).toBe(200);
      const html = await page.text();
      expect(html).toContain('<form id="login">');
      expect(html).toContain('sessionStorage');
      expect(html).not.toContain('demo_sessions');
      // No poller's row or facts, and no time (a checkpoint's): its script names fields
      // (a preview's `checkpoint`), never values.
      expect(html).not.toContain('<tr data-poller=');
      expect(html).not.toContain('<dl class="facts">');
      expect(html).not.toMatch(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/);
    }
  });

  it('keeps its own rule on the nudge route: ADMIN_TOKEN or NUDGE_TOKEN, never the read token', async () => {
    for (const token of [undefined, 'wrong-token', STATUS_TOKEN]) {
      expect((await call('POST', '/pollers/seed/nudge', token)).status, `token ${token}`).toBe(401);
    }
  });
});
