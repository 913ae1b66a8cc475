import { OVERVIEW_VIEW } from './client-overview.ts';
import { PREVIEW_ACTIONS } from './client-preview.ts';
import { RECONCILE_ACTIONS } from './client-reconcile.ts';

/**
 * The dashboard's one script (the page's CSP nonce allows only it), plain JavaScript with no
 * build step. It keeps the token in sessionStorage and sends it as a bearer header, never in
 * a URL; fetches the server-rendered panel every 5 s while the tab is visible (fewer requests,
 * quieter `wrangler dev` logs), backing off to 15 s while the Worker cannot be reached and
 * saying so in a banner; and turns each button into an admin API call with a notice in words.
 * On the overview it keeps the filters and the page (search, label, state, cursor) in the URL
 * and the cursors of the pages before in history.state, so Previous, Back and a reload work;
 * each refresh asks for that one page.
 */
export const CLIENT = `
const key = 'tidemark-token';
const byId = (id) => document.getElementById(id);
const panel = byId('panel');
const message = byId('message');
const notice = byId('notice');
const banner = byId('banner');
const updated = byId('updated');
const source = document.body.dataset.panel;
const fleet = 'fleet' in document.body.dataset;
const FILTERS = ['search', 'label', 'state'];
const EVERY = 5000;
const SLOWEST = 15000;
let lastOk = null;
let failures = 0;
let timer = null;
let shown = '';
let sequence = 0;

const token = () => sessionStorage.getItem(key);
const enc = encodeURIComponent;
const count = (n, noun) => n + ' ' + noun + (n === 1 ? '' : 's');
const clock = (ms) => new Date(ms).toISOString().slice(11, 19) + 'Z';
function headers(json) {
  const out = { authorization: 'Bearer ' + token() };
  if (json) out['content-type'] = 'application/json';
  return out;
}
function say(text, kind) {
  notice.textContent = text;
  notice.className = 'notice ' + (kind || '');
}
function ago(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 120 ? s + ' s' : Math.round(s / 60) + ' min';
}
function showBanner() {
  panel.classList.toggle('stale', failures > 0);
  if (failures === 0) {
    banner.hidden = true;
    return;
  }
  banner.hidden = false;
  byId('banner-text').textContent =
    'Disconnected — ' + (lastOk === null ? 'no update yet' : 'last updated ' + ago(Date.now() - lastOk) + ' ago') +
    '. Retrying every ' + Math.round(delay() / 1000) + ' s.';
}
const delay = () => Math.min(SLOWEST, EVERY * (1 + failures));
function schedule() {
  clearTimeout(timer);
  timer = setTimeout(refresh, delay());
}
function failed() {
  failures += 1;
  showBanner();
  schedule();
}
function swap(text) {
  const open = Array.from(panel.querySelectorAll('details[open][data-keep]'), (d) => d.dataset.keep);
  panel.innerHTML = text;
  shown = text;
  for (const d of panel.querySelectorAll('details[data-keep]')) if (open.includes(d.dataset.keep)) d.open = true;
  const titled = panel.querySelector('[data-title]');
  document.title = titled ? titled.dataset.title + ' · tidemark' : 'tidemark';
  // A link to one run (#run-<id>) finds it once the panel has it, the first time only.
  const linked = !scrolled && location.hash.startsWith('#run-') ? document.getElementById(location.hash.slice(1)) : null;
  if (linked) {
    scrolled = true;
    linked.scrollIntoView({ block: 'center' });
  }
}
let scrolled = false;
async function refresh() {
  clearTimeout(timer);
  if (!token() || document.hidden) return;
  const mine = ++sequence;
  let response;
  let text = null;
  try {
    response = await fetch(panelSource(), { headers: headers(), cache: 'no-store' });
    text = await response.text();
  } catch {
    if (mine === sequence) failed();
    return;
  }
  if (mine !== sequence) return;
  if (response.status >= 500) {
    try { message.textContent = JSON.parse(text).error || ''; } catch {}
    return failed();
  }
  failures = 0;
  showBanner();
  if (!response.ok) {
    if (fleet) byId('pager').hidden = true;
    let error = '';
    try { error = JSON.parse(text).error || ''; } catch {}
    showAccess(null);
    message.textContent =
      response.status === 401 ? 'That token was not accepted.' : error || 'Status unavailable (' + response.status + ').';
    panel.innerHTML = '';
    shown = '';
    return;
  }
  lastOk = Date.now();
  showAccess(response.headers.get('x-tidemark-access'));
  message.textContent = '';
  updated.textContent = 'Updated ' + clock(lastOk);
  if (text !== shown) swap(text);
  showPager();
  schedule();
}
// Which token is in use, said once a panel came back with it: what the buttons can do.
const ACCESS = {
  admin: 'Using ADMIN_TOKEN: you can run, pause, resume, replay and discard.',
  read: 'Using STATUS_TOKEN: read only. Run, Pause, Replay and Discard need ADMIN_TOKEN.',
};
function showAccess(access) {
  const line = byId('access');
  line.textContent = ACCESS[access] || '';
  line.className = 'access ' + (access || '');
  line.hidden = !ACCESS[access];
}
function reset() {
  showAccess(null);
  byId('forget').hidden = !token();
  if (fleet) {
    byId('filters').hidden = !token();
    byId('pager').hidden = true;
  }
  say('');
  panel.innerHTML = '';
  shown = '';
  failures = 0;
  lastOk = null;
  updated.textContent = '';
  showBanner();
}

${OVERVIEW_VIEW}async function call(method, path, body) {
  try {
    const response = await fetch(path, {
      method,
      headers: headers(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    return { status: response.status, ok: response.ok, data };
  } catch (error) {
    return { status: 0, ok: false, data: { error: 'tidemark could not be reached (' + error.message + ')' } };
  }
}
function refused(result) {
  if (result.status === 401) return 'That token was not accepted.';
  if (result.status === 403) return 'This needs ADMIN_TOKEN: the token in use is read-only.';
  return null;
}
// A URL's %3A as ":", for display only (error-text.ts does the same on the server).
const decoded = (text) => text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => { try { return decodeURIComponent(run); } catch { return run; } });
const why = (data, status) => data.error || (data.errors || []).join('; ') || 'HTTP ' + status;
const pollerPath = (name) => '/pollers/' + enc(name);
const letterPath = (name, letter) => pollerPath(name) + '/dead-letters/' + enc(letter);

async function pollerAction(action, name) {
  const result = await call('POST', pollerPath(name) + '/' + action);
  const data = result.data;
  const no = refused(result);
  if (no) return say(no, 'error');
  if (action === 'pause' || action === 'resume') {
    const done = action === 'pause' ? 'paused' : 'resumed';
    return result.ok ? say(name + ' ' + done, 'ok') : say('Could not ' + action + ' ' + name + ': ' + why(data, result.status), 'error');
  }
  const run = data.run || {};
  const dead = run.dead_lettered ? ', ' + run.dead_lettered + ' dead-lettered' : '';
  if (data.outcome === 'success') return say(name + ' ran and caught up: ' + count(run.records, 'record') + ' delivered' + dead, dead ? 'warn' : 'ok');
  if (data.outcome === 'continued') return say(name + ' ran: ' + count(run.records, 'record') + ' delivered' + dead + ', and it continues with the backlog', 'ok');
  if (data.outcome === 'failed') return say(name + ' ran and failed: ' + decoded(run.error || 'see its run history'), 'error');
  if (data.reason === 'lease_held') return say(name + ' is already running: run ' + data.lease.epoch + ' holds the lease', 'warn');
  if (data.reason === 'paused') return say(name + ' is paused: resume it to run it', 'warn');
  if (data.reason === 'backing_off') return say(name + ' is backing off after failed runs until ' + clock(data.retryAt), 'warn');
  if (data.reason === 'rate_limited') return say(name + ' waits for its upstream, which asked for no request before ' + clock(Date.parse(data.retry_at)), 'warn');
  if (data.reason === 'disabled') return say(name + ' is disabled in POLLERS', 'warn');
  if (data.outcome === 'misconfigured') return say(name + ' is misconfigured: ' + why(data, result.status), 'error');
  if (result.ok) return say(name + ' ran: ' + data.outcome, 'ok');
  say('Could not run ' + name + ': ' + why(data, result.status), 'error');
}
async function replay(name, letter, label) {
  const result = await call('POST', letterPath(name, letter) + '/replay');
  const no = refused(result);
  if (no) return say(no, 'error');
  if (result.ok) return say('Dead letter ' + label + ' of ' + name + ' replayed and delivered', 'ok');
  if (result.data.outcome === 'not_found') return say('Dead letter ' + label + ' of ' + name + ' is already gone', 'warn');
  if (result.data.outcome === 'failed') return say('Replay of dead letter ' + label + ' failed again: ' + why(result.data, result.status), 'error');
  say('Could not replay dead letter ' + label + ': ' + why(result.data, result.status), 'error');
}
async function discard(name, letter, label, reason) {
  const result = await call('DELETE', letterPath(name, letter), { reason });
  const no = refused(result);
  if (no) return say(no, 'error');
  if (result.ok) return say('Dead letter ' + label + ' of ' + name + ' discarded: ' + reason, 'ok');
  if (result.status === 404) return say('Dead letter ' + label + ' of ' + name + ' is already gone', 'warn');
  say('Could not discard dead letter ' + label + ': ' + why(result.data, result.status), 'error');
}
${RECONCILE_ACTIONS}${PREVIEW_ACTIONS}async function replayAll(name) {
  const seen = new Set();
  let cursor = null;
  let delivered = 0;
  let failedAgain = 0;
  do {
    const list = await call('GET', pollerPath(name) + '/dead-letters?limit=100' + (cursor ? '&cursor=' + enc(cursor) : ''));
    if (!list.ok) return say(refused(list) || 'Could not list the dead letters of ' + name + ': ' + why(list.data, list.status), 'error');
    for (const item of list.data.items) {
      if (seen.has(item.key)) continue;
      seen.add(item.key);
      say('Replaying the dead letters of ' + name + ': ' + seen.size + '…');
      const result = await call('POST', letterPath(name, item.key) + '/replay');
      if (result.ok) delivered += 1;
      else if (['failed', 'unreadable', 'too_deep', 'not_found'].includes(result.data.outcome)) failedAgain += 1;
      else return say('Replay all stopped after ' + count(delivered, 'delivery') + ': ' + why(result.data, result.status), 'error');
    }
    cursor = list.data.next_cursor;
  } while (cursor);
  say(
    'Replayed ' + count(seen.size, 'dead letter') + ' of ' + name + ': ' + delivered + ' delivered' +
      (failedAgain ? ', ' + failedAgain + ' still failing' : ''),
    failedAgain ? 'warn' : 'ok',
  );
}

const dialog = byId('confirm');
const reasonInput = byId('confirm-reason');
let pending = null;
function ask(text, okLabel, needsReason, then) {
  byId('confirm-text').textContent = text;
  byId('confirm-ok').textContent = okLabel;
  byId('confirm-reason-label').hidden = !needsReason;
  reasonInput.required = needsReason;
  reasonInput.value = '';
  pending = then;
  dialog.showModal();
  if (needsReason) reasonInput.focus();
}
byId('confirm-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const then = pending;
  pending = null;
  dialog.close();
  if (then) then(reasonInput.value.trim());
});
byId('confirm-cancel').addEventListener('click', () => {
  pending = null;
  dialog.close();
});

async function act(button, work) {
  button.disabled = true;
  try {
    await work();
  } finally {
    button.disabled = false;
    await refresh();
  }
}
panel.addEventListener('click', (event) => {
  const filter = fleet && event.target.closest('a[data-filter]');
  if (filter && !event.ctrlKey && !event.metaKey && !event.shiftKey) {
    event.preventDefault();
    return filterBy({ [filter.dataset.filter]: filter.dataset.value });
  }
  const button = event.target.closest('button[data-action]');
  if (!button) return;
  const { action, poller, key: letter, label } = button.dataset;
  if (action === 'discard') {
    return ask(
      'Discard dead letter ' + label + ' of ' + poller + '? It will not be delivered again. Say why: the reason is kept in the audit log.',
      'Discard', true, (reason) => act(button, () => discard(poller, letter, label, reason)));
  }
  if (action === 'replay-all') {
    return ask('Replay all ' + count(Number(button.dataset.count), 'dead letter') + ' of ' + poller + ' now, one after another?',
      'Replay all', false, () => act(button, () => replayAll(poller)));
  }
  if (action === 'replay') return act(button, () => replay(poller, letter, label));
  if (action === 'reconcile-confirm') {
    return ask('Deliver the ' + count(Number(button.dataset.count), 'held delete') + ' of ' + poller +
      '? Each goes to the receiver as a delete (record.deleted). Confirm only if these records are gone upstream.',
      'Confirm deletes', false, () => act(button, () => confirmDeletes(poller)));
  }
  if (action === 'reconcile') return act(button, () => reconcile(poller));
  if (action === 'preview') return act(button, () => preview(poller));
  act(button, () => pollerAction(action, poller));
});

byId('login').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.setItem(key, byId('token').value.trim());
  byId('token').value = '';
  reset();
  refresh();
});
byId('forget').addEventListener('click', () => {
  sessionStorage.removeItem(key);
  reset();
  message.textContent = 'Enter a token to see the pollers.';
});
byId('retry').addEventListener('click', () => refresh());
if (fleet) {
  byId('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    filterBy(Object.fromEntries(FILTERS.map((name) => [name, byId('filter-' + name).value.trim()])));
  });
  byId('filter-state').addEventListener('change', () => byId('filters').requestSubmit());
  byId('filter-clear').addEventListener('click', () => filterBy({ search: '', label: '', state: '' }));
  byId('page-next').addEventListener('click', (event) => {
    const params = view();
    const earlier = [...trail(), params.get('cursor') || ''];
    params.set('cursor', event.currentTarget.dataset.cursor);
    go(params, earlier);
  });
  byId('page-prev').addEventListener('click', () => {
    const earlier = [...trail()];
    const params = view();
    const before = earlier.pop();
    if (before) params.set('cursor', before);
    else params.delete('cursor');
    go(params, earlier);
  });
  byId('page-first').addEventListener('click', () => {
    const params = view();
    params.delete('cursor');
    go(params, []);
  });
  window.addEventListener('popstate', showView);
  for (const name of FILTERS) byId('filter-' + name).value = view().get(name) || '';
  byId('filters').hidden = !token();
}
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refresh();
});
// The banner's "N s ago" counts locally: no request for it.
setInterval(() => { if (failures > 0) showBanner(); }, 1000);
// Before a token is given the page is the token form and nothing else.
if (token()) message.textContent = '';
byId('forget').hidden = !token();
refresh();
`;
