import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call } from '../support/call.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { app } from '../support/worker.ts';

const { ADMIN_TOKEN } = TEST_SECRETS;

/** The policy's nonce, after checking the headers every response must carry. */
function expectSecurityHeaders(response: Response): string {
  const csp = response.headers.get('content-security-policy') ?? '';
  const directives = new Map(
    csp.split(';').map((directive) => {
      const [name = '', ...values] = directive.trim().split(/\s+/);
      return [name, values.join(' ')];
    }),
  );
  expect(directives.get('default-src')).toBe("'none'");
  expect(directives.get('frame-ancestors')).toBe("'none'");
  expect(directives.get('base-uri')).toBe("'none'");
  expect(directives.get('connect-src')).toBe("'self'");
  const nonce = /^'nonce-([A-Za-z0-9+/=]{22,})'$/.exec(directives.get('script-src') ?? '')?.[1];
  expect(nonce, `script-src allows exactly one nonce: ${csp}`).toBeDefined();
  expect(directives.get('style-src')).toBe(`'nonce-${nonce}'`);
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  expect(response.headers.get('x-frame-options')).toBe('DENY');
  return nonce ?? '';
}

/** Every route the app registers, with its params filled in: a new route is covered the day it is added. */
const ROUTES = [
  ...new Set(
    app.routes
      .filter((route) => route.method !== 'ALL')
      .map((route) => `${route.method} ${route.path.replace(/:[a-z]+/g, 'seed')}`),
  ),
].map((route) => route.split(' ') as [string, string]);

describe('security headers', () => {
  it('the route list covers every family: /, /healthz, /status, /metrics, /pollers, /demo', () => {
    const families = new Set(ROUTES.map(([, path]) => `/${path.split('/')[1]}`));
    for (const family of ['/', '/healthz', '/status', '/metrics', '/pollers', '/demo'])
      expect(families).toContain(family);
  });

  for (const [method, path] of ROUTES) {
    // Reads with the admin token (their real answer); writes without one (a 401, no side effect).
    const token = method === 'GET' ? ADMIN_TOKEN : undefined;
    it(`${method} ${path} answers with a strict CSP, frame-ancestors 'none', nosniff and no-referrer`, async () => {
      const response = await call(method, path, token);
      await response.arrayBuffer();
      expectSecurityHeaders(response);
    });
  }

  it('the dashboard page tags its only script and style with the nonce its CSP allows, new on every load', async () => {
    const first = await call('GET', '/');
    const nonce = expectSecurityHeaders(first);
    const page = await first.text();
    expect(page.match(/<script\b[^>]*>/g)).toEqual([`<script nonce="${nonce}">`]);
    expect(page.match(/<style\b[^>]*>/g)).toEqual([`<style nonce="${nonce}">`]);
    expect(page).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    const second = await call('GET', '/');
    await second.arrayBuffer();
    expect(expectSecurityHeaders(second)).not.toBe(nonce);
  });

  it('error answers carry them too: 404, 401, 400 and an internal 500', async () => {
    const notFound = await call('GET', '/no-such-route');
    expect(notFound.status).toBe(404);
    expectSecurityHeaders(notFound);
    const unauthorized = await call('GET', '/status');
    expect(unauthorized.status).toBe(401);
    expectSecurityHeaders(unauthorized);
    const badBody = await call('PUT', '/pollers/seed/checkpoint', ADMIN_TOKEN, '{not json');
    expect(badBody.status).toBe(400);
    expectSecurityHeaders(badBody);
    const broken = await app.request(
      '/status',
      { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
      { ...env, POLLER: undefined },
    );
    expect(broken.status).toBe(500);
    expectSecurityHeaders(broken);
  });
});
