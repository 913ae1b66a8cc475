import { html } from 'hono/html';
import { reconnectAlert } from '../../poller/auth-view.ts';
import type { RefreshSecret } from '../../poller/refresh-secret.ts';
import type { PollerStatus } from '../../poller/status.ts';
import {
  type AuthKind,
  type AuthType,
  type AuthView,
  authKinds,
} from '../../sources/auth/index.ts';
import { plural, relative, when } from './format.ts';

export type { RefreshSecret } from '../../poller/refresh-secret.ts';

/** A source.auth kind, by the type status shows (null: a type this Worker does not know). */
function kindNamed(type: string): AuthKind<{ type: string }> | null {
  return Object.hasOwn(authKinds, type) ? authKinds[type as AuthType] : null;
}

/** The step that gives the poller its new refresh token. */
function giveStep(name: string, secret: RefreshSecret | null) {
  if (secret?.where === 'worker') {
    return html`Set the Worker secret <code>${secret.name}</code> to it:
      <code>npx wrangler secret put ${secret.name}</code> (which starts a new version of the Worker).`;
  }
  if (secret !== null) {
    return html`Give it to the poller: <code>PUT /pollers/${name}/secrets/${secret.name}</code>
      (admin token) with the token as the body. It is sealed, and never shown again.`;
  }
  return html`Give it to the poller where its <code>source.auth.refresh_token</code> comes from:
    the config as written names no <code>\${NAME}</code> there (with one, this is
    <code>PUT /pollers/${name}/secrets/&lt;NAME&gt;</code>).`;
}

/**
 * The one thing in this section that waits for a person: the provider refused the refresh
 * token, and only a new one (a new authorisation at the provider) brings the poller back.
 */
function reconnectBox(name: string, secret: RefreshSecret | null) {
  return html`<div class="reconnect" data-reconnect="${name}">
    <p><strong>Reconnect needed</strong>: the provider refused this poller's refresh token (see
      Last error), so no run gets data until the poller has a new one. The refused token is not
      sent again.</p>
    <ol>
      <li>Authorise tidemark again at the provider and take the new refresh token.</li>
      <li>${giveStep(name, secret)}</li>
      <li>Run now, or let the booked retry (at most 30 min away) pick it up: the first renewal
        that works clears this.</li>
    </ol>
  </div>`;
}

function stateText(view: AuthView) {
  if (view.state === 'reconnect_needed') {
    return html`<span class="error"><strong>reconnect needed</strong>: the provider refused the refresh token (above)</span>`;
  }
  return 'ok';
}

function expiryText(view: AuthView, now: number): string {
  const at = view.token_expires_at;
  const stuck = 'no renewal works until the poller has a new refresh token';
  if (at === null) {
    if (view.state === 'reconnect_needed') return `no token: ${stuck}`;
    return view.last_renewal_at === null
      ? 'no token yet: the first request that needs one asks the provider'
      : 'the provider gave no expiry: the token is used until the upstream answers 401';
  }
  const after =
    view.state === 'reconnect_needed'
      ? `, as the provider gave it: ${stuck}`
      : Date.parse(at) <= now
        ? ': the next request renews it'
        : ', renewed shortly before';
  return `${when(at)} (${relative(at, now)})${after}`;
}

function renewalText(at: string | null, now: number): string {
  return at === null ? 'none yet' : `${when(at)} (${relative(at, now)})`;
}

function errorText(view: AuthView, now: number) {
  const error = view.last_error;
  if (error === null) return 'none';
  const cleared = view.state === 'ok' ? '; the next renewal that works clears it' : '';
  return html`<span class="error">${error.message}</span> at ${when(error.at)} (${relative(error.at, now)})${cleared}`;
}

/**
 * The poller page's Authentication section (source.auth): its type, and for oauth2 "reconnect
 * needed" first (with what to do) when the provider refused the refresh token, then the
 * state, when the access token expires, the last renewal, the renewals of the last 24 h and
 * the last error. Never a token: the status has none. Nothing for a source without auth.
 */
export function authSection(status: PollerStatus, secret: RefreshSecret | null, now: number) {
  const view = status.auth;
  if (view === null) return '';
  const kind = kindNamed(view.type);
  const rows: [string, unknown][] = [['Type', kind?.summary ?? view.type]];
  if (kind?.renews) {
    rows.push(
      ['State', stateText(view)],
      ['Access token expires', expiryText(view, now)],
      ['Last renewal', renewalText(view.last_renewal_at, now)],
      ['Renewals (24 h)', plural(view.renewals_24h, 'renewal')],
      ['Last error', errorText(view, now)],
    );
  }
  return html`<h3 id="auth">Authentication</h3>
    <div class="auth">
      ${view.state === 'reconnect_needed' ? reconnectBox(status.name, secret) : ''}
      <dl class="facts">
        ${rows.map(([term, value]) => html`<dt>${term}</dt><dd>${value}</dd>`)}
      </dl>
    </div>`;
}

/** The last run's error as an alert, when it is the reconnect story again. */
const isReconnectRunError = (line: string) =>
  line.startsWith('misconfigured: ') && line.includes('source.auth: reconnect needed: ');

/**
 * The page's "why" lines without the one that repeats the reconnect alert: the last run's
 * "misconfigured: … source.auth: reconnect needed: …" goes when the alert itself is there
 * (which becomes a pointer to the section, authWhyLine). The run history keeps that error.
 */
export function authWhyLines(status: PollerStatus, lines: string[]): string[] {
  const alert = reconnectAlert(status.name, status.auth);
  if (alert === null || !lines.includes(alert)) return lines;
  return lines.filter((line) => !isReconnectRunError(line));
}

/**
 * A line of the page's "why" list about authentication, said as a pointer to its section:
 * "reconnect needed" is told once, in the section, with what to do. Null for any other line.
 */
export function authWhyLine(status: PollerStatus, line: string) {
  const alert = reconnectAlert(status.name, status.auth);
  if (alert === null || line !== alert) return null;
  return html`Reconnect needed: the provider refused the refresh token: see <a href="#auth">Authentication</a> to give the poller a new one.`;
}
