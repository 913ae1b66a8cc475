import { env } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { pollerPageData } from '../../src/http/dashboard/data.ts';
import { pollerPanel } from '../../src/http/dashboard/poller-page.ts';
import type { AuthView } from '../../src/sources/auth/index.ts';
import { pageText, pollerPage } from '../support/dashboard-page.ts';
import { api, createPoller, objectOf, setSecret } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { FakeOAuthProvider, guarded } from './fake-oauth.ts';
import { FakeUpstream, installFakes } from './fakes.ts';

const MINUTE = 60_000;
const { STATUS_TOKEN } = TEST_SECRETS;

let provider: FakeOAuthProvider;
let upstream: FakeUpstream;
/** Every token the provider issued (access and refresh): none may be on a page. */
let issued: string[];

beforeEach(() => {
  provider = new FakeOAuthProvider();
  provider.accessMs = 60 * MINUTE;
  issued = [provider.firstRefreshToken];
  provider.onIssued = ({ access, refresh }) => issued.push(access, refresh);
  upstream = new FakeUpstream();
  const guard = guarded(provider, upstream);
  installFakes({ 'upstream.test': guard.host, 'login.test': provider });
});

/** A runtime poller of the guarded upstream, its refresh token in its own CRM_REFRESH_TOKEN. */
async function oauthPoller(prefix: string) {
  const name = await createPoller(prefix, {
    sinceMs: 10 * MINUTE,
    every: undefined,
    cron: '0 0 1 1 *',
    source: {
      headers: {},
      auth: {
        type: 'oauth2',
        token_url: 'https://login.test/token',
        client_id: provider.clientId,
        client_secret: '${CRM_CLIENT_SECRET}',
        refresh_token: '${CRM_REFRESH_TOKEN}',
      },
    },
  });
  await setSecret(name, 'CRM_CLIENT_SECRET', provider.clientSecret);
  await setSecret(name, 'CRM_REFRESH_TOKEN', provider.firstRefreshToken);
  return name;
}

const page = pollerPage;

const text = pageText;

/** The Authentication section's HTML. */
const section = (html: string) =>
  /<h3 id="auth">Authentication<\/h3>([\s\S]*?)<h3/.exec(html)?.[1] ?? '';

/** The section's fact for `term`, as HTML. */
const factHtml = (html: string, term: string) =>
  new RegExp(`<dt>${term.replace(/[()]/g, '\\$&')}</dt>\\s*<dd>([\\s\\S]*?)</dd>`).exec(
    section(html),
  )?.[1] ?? '';

const fact = (html: string, term: string) => text(factHtml(html, term));

/** The terms of the section's facts, in order. */
const terms = (html: string) =>
  [...section(html).matchAll(/<dt>([^<]*)<\/dt>/g)].map((match) => match[1]);

/** The reconnect box's HTML. */
const box = (html: string) =>
  /<div class="reconnect"[^>]*>([\s\S]*?)<\/div>/.exec(section(html))?.[1] ?? '';

/** The page's "why" lines, as HTML. */
const whyLines = (html: string) =>
  [
    ...(/<ul class="why">([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '').matchAll(
      /<li[^>]*>([\s\S]*?)<\/li>/g,
    ),
  ].map((match) => match[1] ?? '');

const occurrences = (html: string, part: string) => html.split(part).length - 1;

/** No token the provider issued, nor the client secret, anywhere on the page. */
function expectNoToken(html: string) {
  for (const token of [...issued, provider.clientSecret]) expect(html).not.toContain(token);
}

/** Makes the provider refuse the poller's refresh token at its next run (invalid_grant). */
async function refuse(name: string, description = 'the refresh token was revoked') {
  provider.expireAll(); // the upstream answers 401: the poller renews, and is refused
  provider.respondOnce(() =>
    Response.json({ error: 'invalid_grant', error_description: description }, { status: 400 }),
  );
  const failed = await objectOf(name).runNow();
  expect(failed).toMatchObject({ outcome: 'ran', run: { outcome: 'failed' } });
}

describe('authentication on the poller page', () => {
  it('a poller page shows an oauth2 source as ok, with when its access token expires, the last renewal and the renewals of 24 h, and no token', async () => {
    const name = await oauthPoller('dash-auth-ok');
    upstream.add('a', Date.now() - MINUTE);
    expect(await objectOf(name).runNow()).toMatchObject({ run: { outcome: 'success' } });

    const html = await page(name, STATUS_TOKEN);
    expect(terms(html)).toEqual([
      'Type',
      'State',
      'Access token expires',
      'Last renewal',
      'Renewals (24 h)',
      'Last error',
    ]);
    expect(fact(html, 'Type')).toBe(
      'oauth2: an access token from the provider, renewed when needed',
    );
    expect(fact(html, 'State')).toBe('ok');
    expect(fact(html, 'Access token expires')).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(in (60|59)m\), renewed shortly before$/,
    );
    expect(fact(html, 'Last renewal')).toMatch(/^\S+ \S+ \(\d+s ago\)$/);
    expect(fact(html, 'Renewals (24 h)')).toBe('1 renewal');
    expect(fact(html, 'Last error')).toBe('none');
    expect(section(html)).not.toContain('class="reconnect"');
    expect(html).not.toContain('href="#auth"');
    expectNoToken(html);
    await api('DELETE', `/pollers/${name}`);
  });

  it('a poller page says "reconnect needed" once, in red, with the PUT that gives the poller a new refresh token, and clears it once one works', async () => {
    const name = await oauthPoller('dash-auth-reconnect');
    upstream.add('a', Date.now() - 2 * MINUTE);
    await objectOf(name).runNow();
    await refuse(name);

    const html = await page(name);
    expect(text(box(html))).toBe(
      `Reconnect needed : the provider refused this poller's refresh token (see Last error), so no run gets data until the poller has a new one. The refused token is not sent again. Authorise tidemark again at the provider and take the new refresh token. Give it to the poller: PUT /pollers/${name}/secrets/CRM_REFRESH_TOKEN (admin token) with the token as the body. It is sealed, and never shown again. Run now, or let the booked retry (at most 30 min away) pick it up: the first renewal that works clears this.`,
    );
    expect(factHtml(html, 'State')).toContain(
      '<span class="error"><strong>reconnect needed</strong>',
    );
    expect(fact(html, 'Last error')).toMatch(
      /^POST https:\/\/login\.test\/token: HTTP 400 invalid_grant; .*the refresh token was revoked.* at \S+ \S+ \(\d+s ago\)$/,
    );
    expect(fact(html, 'Access token expires')).toMatch(
      /^\S+ \S+ \(in (60|59)m\), as the provider gave it: no renewal works until the poller has a new refresh token$/,
    );
    // Told once: the why list points to the section instead of repeating the alert, and the
    // last run's "misconfigured: … source.auth: reconnect needed: …" (the same story) goes.
    const lines = whyLines(html);
    expect(lines.filter((line) => line.includes('#auth')).map(text)).toEqual([
      'Reconnect needed: the provider refused the refresh token: see Authentication to give the poller a new one.',
    ]);
    expect(html).toContain(
      '<li class="error">Reconnect needed: the provider refused the refresh token: see <a href="#auth">Authentication</a>',
    );
    expect(lines.map(text).filter((line) => /reconnect needed/i.test(line))).toHaveLength(1);
    expect(lines.some((line) => line.includes('source.auth: reconnect needed'))).toBe(false);
    expect(occurrences(section(html), 'PUT /pollers/')).toBe(1);
    // Above the run history (which keeps each run's error as it was): the provider's answer once.
    const top = html.split('<h3>Lag and records per run</h3>')[0] ?? '';
    expect(occurrences(top, 'the refresh token was revoked')).toBe(1);
    expect(html).not.toMatch(/\sstyle=|\son[a-z]+=/i); // the page's CSP allows neither
    expectNoToken(html);

    provider.valid.add('refresh-reconnected');
    issued.push('refresh-reconnected');
    await setSecret(name, 'CRM_REFRESH_TOKEN', 'refresh-reconnected');
    upstream.add('b', Date.now());
    expect(await objectOf(name).runNow()).toMatchObject({ run: { outcome: 'success' } });
    const after = await page(name);
    expect(after).not.toContain('class="reconnect"');
    expect(after).not.toContain('href="#auth"');
    expect(fact(after, 'State')).toBe('ok');
    expect(fact(after, 'Last error')).toBe('none');
    expect(fact(after, 'Renewals (24 h)')).toBe('2 renewals');
    expectNoToken(after);
    await api('DELETE', `/pollers/${name}`);
  });

  it("a poller page shows the provider's error escaped", async () => {
    const name = await oauthPoller('dash-auth-escaped');
    upstream.add('a', Date.now() - 2 * MINUTE);
    await objectOf(name).runNow();
    await refuse(name, '<b>revoked</b> <img src=x onerror=alert(1)>');

    const html = await page(name);
    expect(html).not.toContain('<b>revoked</b>');
    expect(html).not.toContain('<img');
    expect(fact(html, 'Last error')).toContain('&lt;b&gt;revoked&lt;/b&gt;');
    expect(factHtml(html, 'Last error')).toMatch(/^<span class="error">POST https:\/\/login\.test/);
    await api('DELETE', `/pollers/${name}`);
  });

  it('a poller page shows only the kind of a bearer source, and no token', async () => {
    const name = await createPoller('dash-auth-bearer', {
      sinceMs: 10 * MINUTE,
      source: { headers: {}, auth: { type: 'bearer', token: '${UPSTREAM_TOKEN}' } },
    });
    const html = await page(name, STATUS_TOKEN);
    expect(terms(html)).toEqual(['Type']);
    expect(fact(html, 'Type')).toBe(
      'bearer: a token from the config, sent as it is (nothing to renew)',
    );
    expect(html).not.toContain(TEST_SECRETS.UPSTREAM_TOKEN);
    await api('DELETE', `/pollers/${name}`);
  });

  it('a poller page without source.auth shows no Authentication section', async () => {
    const html = await page('seed');
    expect(html).not.toContain('id="auth"');
    expect(html).not.toContain('href="#auth"');
  });

  it('a static poller whose refresh token is a Worker secret is told to set it with wrangler, not PUT', async () => {
    const data = await pollerPageData(env, 'demo_oauth', true);
    expect(data?.refreshSecret).toEqual({ name: 'DEMO_REFRESH_TOKEN', where: 'worker' });
    if (!data) return;
    const auth: AuthView = {
      type: 'oauth2',
      state: 'reconnect_needed',
      token_expires_at: null,
      last_renewal_at: null,
      renewals_24h: 0,
      last_error: { at: new Date().toISOString(), message: 'HTTP 400 invalid_grant' },
    };
    const html = String(
      await pollerPanel({ ...data, status: { ...data.status, auth } }, new Date()),
    );
    expect(text(box(html))).toContain(
      'Set the Worker secret DEMO_REFRESH_TOKEN to it: npx wrangler secret put DEMO_REFRESH_TOKEN',
    );
    expect(section(html)).not.toContain('PUT /pollers/');
    expect(fact(html, 'Access token expires')).toBe(
      'no token: no renewal works until the poller has a new refresh token',
    );
    expect(fact(html, 'Last renewal')).toBe('none yet');
  });
});
