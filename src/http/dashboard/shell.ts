import { html, raw } from 'hono/html';
import { CLIENT } from './client.ts';
import { POLLER_STATES } from './fleet-query.ts';
import { STYLES } from './styles.ts';

/**
 * The overview's filters and pager. They live outside the panel, so a refresh never replaces
 * what is being typed; the script keeps them in the URL (never the token) and sends them
 * with each refresh.
 */
const fleetControls = html`<form id="filters" class="filters" hidden>
  <input id="filter-search" name="search" type="search" maxlength="100" autocomplete="off"
    placeholder="name contains" aria-label="part of the name" />
  <input id="filter-label" name="label" maxlength="400" autocomplete="off"
    placeholder="label: key=value" aria-label="label, as key=value"
    pattern="[A-Za-z_][A-Za-z0-9_]*=.*" title="key=value, e.g. tier=gold" />
  <select id="filter-state" name="state" aria-label="state">
    <option value="">any state</option>
    ${POLLER_STATES.map((state) => html`<option value="${state}">${state}</option>`)}
  </select>
  <button type="submit">Filter</button>
  <button type="button" id="filter-clear">Clear</button>
</form>
<nav id="pager" class="pager" aria-label="pages" hidden>
  <button type="button" id="page-first">« First</button>
  <button type="button" id="page-prev">‹ Previous</button>
  <span id="page-range" class="muted"></span>
  <button type="button" id="page-next">Next ›</button>
</nav>`;

/**
 * A dashboard page. It holds no data: the token is entered once, kept in sessionStorage and
 * sent as a bearer header (never in a URL) to fetch `panel`, the server-rendered part, every
 * few seconds without reloading the page; the overview (`fleet`) adds filters and a pager.
 * Buttons call the admin API; Discard and Replay all ask first in a dialog. Its one script
 * and one style block carry this response's CSP nonce (src/http/security-headers.ts).
 */
export function dashboardShell(nonce: string, panel: string, { fleet }: { fleet: boolean }) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>tidemark</title>
<style nonce="${nonce}">${raw(STYLES)}</style>
</head>
<body data-panel="${panel}"${fleet ? raw(' data-fleet') : ''}>
<h1><a href="/">tidemark</a></h1>
<form id="login">
  <input id="token" type="password" autocomplete="off" placeholder="ADMIN_TOKEN or STATUS_TOKEN" aria-label="token" />
  <button type="submit">Use token</button>
  <button type="button" id="forget" hidden>Forget token</button>
</form>
<p id="access" class="access" hidden></p>
<div id="banner" class="banner" role="alert" hidden><span id="banner-text"></span>
  <button type="button" id="retry">Retry now</button></div>
<p id="message" class="muted">Enter a token to see the pollers.</p>
<p id="notice" class="notice" role="status"></p>
<p id="updated" class="muted"></p>
${fleet ? fleetControls : ''}
<div id="panel"></div>
<dialog id="confirm">
  <form id="confirm-form">
    <p id="confirm-text"></p>
    <label id="confirm-reason-label" hidden>Reason (kept in the audit log)
      <input id="confirm-reason" maxlength="500" autocomplete="off" pattern=".*[^ ].*" /></label>
    <div class="buttons">
      <button type="button" id="confirm-cancel">Cancel</button>
      <button type="submit" id="confirm-ok">Confirm</button>
    </div>
  </form>
</dialog>
<script nonce="${nonce}">${raw(CLIENT)}</script>
</body>
</html>`;
}
