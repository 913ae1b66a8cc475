/**
 * The dashboard script's overview view (filters, cursor, pager), spliced into the one script
 * (client.ts), whose byId, say, refresh, panel, source, fleet and FILTERS it uses. The
 * filters and the cursor live in the URL and the cursors of earlier pages in history.state,
 * so Previous, Back and a reload work.
 */
export const OVERVIEW_VIEW = `// The overview's view: filters and cursor in the URL, the cursors of earlier pages in history.state.
const view = () => new URLSearchParams(location.search);
const trail = () => (history.state && Array.isArray(history.state.trail) ? history.state.trail : []);
function panelSource() {
  if (!fleet) return source;
  const params = new URLSearchParams();
  for (const [name, value] of view()) if (value && [...FILTERS, 'cursor'].includes(name)) params.set(name, value);
  const query = params.toString();
  return source + (query ? '?' + query : '');
}
function go(params, cursors) {
  const query = params.toString();
  history.pushState({ trail: cursors }, '', location.pathname + (query ? '?' + query : ''));
  showView();
}
function filterBy(changes) {
  const params = view();
  params.delete('cursor');
  for (const [name, value] of Object.entries(changes)) {
    if (value) params.set(name, value);
    else params.delete(name);
  }
  go(params, []);
}
function showView() {
  const params = view();
  for (const name of FILTERS) byId('filter-' + name).value = params.get(name) || '';
  say('');
  shown = '';
  refresh();
}
function showPager() {
  if (!fleet) return;
  const page = panel.querySelector('[data-fleet-page]');
  if (!page) return;
  const cursor = view().get('cursor');
  const count = Number(page.dataset.count);
  const earlier = trail();
  byId('page-prev').disabled = byId('page-first').disabled = !cursor;
  byId('page-next').disabled = !page.dataset.nextCursor;
  byId('page-next').dataset.cursor = page.dataset.nextCursor;
  // After a reload without history the page number is unknown: say where the page starts.
  const first = cursor && earlier.length === 0 ? null : earlier.length * Number(page.dataset.limit) + 1;
  byId('page-range').textContent =
    count === 0 ? 'no poller on this page'
    : first === null ? count + ' after ' + cursor
    : 'pollers ' + first + '–' + (first + count - 1);
  byId('pager').hidden = false;
}

`;
