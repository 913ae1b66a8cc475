/**
 * The dashboard script's Preview button (POST /pollers/:name/preview), spliced into the one
 * script (client.ts), whose byId, call, refused, say, why, count and pollerPath it uses. The
 * answer is shown in a section of its own after the panel, which the panel's refresh every
 * 5 s would replace; records are upstream data, so everything is set as text, never markup.
 * "Forget token" clears it with the rest.
 */
export const PREVIEW_ACTIONS = `function previewSection() {
  let section = byId('preview-result');
  if (!section) {
    section = document.createElement('section');
    section.id = 'preview-result';
    section.className = 'preview';
    panel.after(section);
  }
  return section;
}
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}
function previewTable(head, rows) {
  const wrap = el('div', null, 'scroll');
  const table = el('table');
  const top = el('tr');
  for (const cell of head) top.append(el('th', cell));
  table.append(top);
  for (const row of rows) {
    const tr = el('tr');
    for (const cell of row) {
      const td = el('td');
      td.append(cell instanceof Node ? cell : document.createTextNode(String(cell)));
      tr.append(td);
    }
    table.append(tr);
  }
  wrap.append(table);
  return wrap;
}
function renderPreview(name, data) {
  const section = previewSection();
  section.replaceChildren();
  section.append(el('h3', 'Preview of ' + name + ': nothing was delivered or stored'));
  const warnings = el('ul', null, 'why');
  if (data.warnings.length === 0) warnings.append(el('li', 'No warnings.'));
  for (const warning of data.warnings) warnings.append(el('li', warning.kind + ': ' + warning.message, 'warn'));
  section.append(warnings);
  const w = data.window;
  section.append(el('p', 'Window ' + w.from + ' to ' + w.to + (w.bounded ? '' : ' (open)') + '; ' +
    count(data.pages, 'page') + ' read' + (data.complete ? ', to its end' : '') + '.'));
  const c = data.checkpoint;
  section.append(el('p', 'Checkpoint: from ' + c.from + ' (' + c.from_source + '); a run would commit ' +
    (c.would_commit === null ? 'nothing' : c.would_commit) + ': ' + c.note + '.'));
  section.append(el('h4', 'Requests (' + data.requests.length + ')'));
  section.append(previewTable(['Method', 'Status', 'Time', 'Bytes', 'URL'], data.requests.map((r) =>
    [r.method, r.status === null ? (r.error || 'no answer') : r.status, r.ms + ' ms', r.bytes + ' B', r.url])));
  section.append(el('h4', 'Records (' + data.records.length + ')'));
  section.append(previewTable(['Id', 'Updated at', 'Op', 'Record'], data.records.map((r) => [
    r.id === null ? '—' : r.id,
    r.updated_at === null ? '—' : r.updated_at,
    r.malformed ? 'unreadable: ' + r.malformed : r.delete ? 'delete' : 'upsert',
    el('pre', r.record_text !== undefined ? r.record_text + '…' : JSON.stringify(r.record, null, 1)),
  ])));
  section.scrollIntoView({ block: 'start' });
}
async function preview(name) {
  say('Previewing ' + name + '…');
  const result = await call('POST', pollerPath(name) + '/preview', {});
  const no = refused(result);
  if (no) return say(no, 'error');
  if (!result.ok) return say('Could not preview ' + name + ': ' + why(result.data, result.status), 'error');
  renderPreview(name, result.data);
  const n = result.data.warnings.length;
  say('Preview of ' + name + ': ' + count(result.data.records.length, 'record') + ', ' + count(n, 'warning') + ' (below)', n ? 'warn' : 'ok');
}
byId('forget').addEventListener('click', () => byId('preview-result')?.remove());
`;
