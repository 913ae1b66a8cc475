import { html, raw } from 'hono/html';
import { CLIENT } from './client.ts';
import { STYLES } from './styles.ts';

/**
 * A dashboard page. It holds no data: the token is entered once, kept in sessionStorage and
 * sent as a bearer header (never in a URL) to fetch `panel`, the server-rendered part, every
 * few seconds without reloading the page. Buttons call the admin API; Discard and Replay all
 * ask first in a dialog. Its one script and one style block carry this response's CSP nonce
 * (src/http/security-headers.ts).
 */
export function dashboardShell(nonce: string, panel: string) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>tidemark</title>
<style nonce="${nonce}">${raw(STYLES)}</style>
</head>
<body data-panel="${panel}">
<h1><a href="/">tidemark</a></h1>
<form id="login">
  <input id="token" type="password" autocomplete="off" placeholder="ADMIN_TOKEN or STATUS_TOKEN" aria-label="token" />
  <button type="submit">Use token</button>
  <button type="button" id="forget">Forget token</button>
</form>
<div id="banner" class="banner" role="alert" hidden><span id="banner-text"></span>
  <button type="button" id="retry">Retry now</button></div>
<p id="message" class="muted">Enter a token to see the pollers.</p>
<p id="notice" class="notice" role="status"></p>
<p id="updated" class="muted"></p>
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
