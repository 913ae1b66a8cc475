import { html, raw } from 'hono/html';

/**
 * The dashboard page. It holds no data: the token is entered once, kept in sessionStorage
 * and sent as a bearer header (never in a URL) to fetch the server-rendered panel, every
 * few seconds, without reloading the page. Buttons call the admin API. Its one script and
 * one style block carry this response's CSP nonce (src/http/security-headers.ts).
 */
export function dashboardShell(nonce: string) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>tidemark</title>
<style nonce="${nonce}">
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1b1f24; }
  h1 { font-size: 1.3rem; margin: 0 0 1rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid #e3e6ea; vertical-align: top; }
  .muted { color: #6a737d; }
  .error { color: #b42318; font-size: .85rem; }
  .state { padding: .1rem .45rem; border-radius: .6rem; background: #eef1f4; }
  .state.ok { background: #dcf5e3; } .state.running { background: #dde9ff; }
  .state.lagging, .state.failing, .state.silent { background: #fde9c8; } .state.warning { background: #fff4bf; } .state.misconfigured { background: #fbd5d2; }
  .state.paused { background: #e9e4f5; }
  .chart { width: 100%; max-width: 560px; height: 110px; }
  .chart .bar { fill: #b6d0f7; } .chart .lag { fill: none; stroke: #d9480f; stroke-width: 2; }
  .chart .lag-point { fill: #d9480f; }
  .chart text { font-size: 10px; fill: #6a737d; }
  figure { margin: 1rem 0; } figcaption { font-weight: 600; }
  button { cursor: pointer; }
  #login { display: flex; gap: .5rem; margin-bottom: 1rem; }
</style>
</head>
<body>
<h1>tidemark</h1>
<form id="login">
  <input id="token" type="password" autocomplete="off" placeholder="ADMIN_TOKEN or STATUS_TOKEN" size="40" />
  <button type="submit">Use token</button>
  <button type="button" id="forget">Forget token</button>
</form>
<p id="message" class="muted">Enter a token to see the pollers.</p>
<p id="notice" role="status"></p>
<div id="panel"></div>
<script nonce="${nonce}">${raw(CLIENT)}</script>
</body>
</html>`;
}

const CLIENT = `
const key = 'tidemark-token';
const panel = document.getElementById('panel');
const message = document.getElementById('message');
const notice = document.getElementById('notice');
const headers = () => ({ authorization: 'Bearer ' + sessionStorage.getItem(key) });
async function refresh() {
  if (!sessionStorage.getItem(key)) return;
  const response = await fetch('/dashboard/panel', { headers: headers() });
  if (!response.ok) {
    message.textContent = response.status === 401 ? 'That token was not accepted.' : 'Status unavailable (' + response.status + ').';
    return;
  }
  message.textContent = '';
  panel.innerHTML = await response.text();
}
document.getElementById('login').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(key, document.getElementById('token').value.trim());
  document.getElementById('token').value = '';
  refresh();
});
document.getElementById('forget').addEventListener('click', () => {
  sessionStorage.removeItem(key);
  panel.innerHTML = '';
  message.textContent = 'Enter a token to see the pollers.';
});
panel.addEventListener('click', async (event) => {
  const button = event.target.closest('button[data-action]');
  if (!button) return;
  button.disabled = true;
  const path = '/pollers/' + encodeURIComponent(button.dataset.poller) + '/' + button.dataset.action;
  const response = await fetch(path, { method: 'POST', headers: headers() });
  const body = await response.json().catch(() => ({}));
  notice.textContent = button.dataset.action + ' ' + button.dataset.poller + ': ' + (body.outcome || body.error || response.status);
  await refresh();
});
refresh();
setInterval(refresh, 5000);
`;
