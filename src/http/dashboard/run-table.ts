import { html } from 'hono/html';
import type { RunView } from '../../poller/status.ts';
import { errorText } from './error-text.ts';
import { elapsed, when } from './format.ts';

/** The run table's columns; a run's error goes on a row of its own under the run, as wide as all. */
const COLUMNS = [
  'Finished',
  'Run',
  'Trigger',
  'Outcome',
  'Windows',
  'Pages',
  'Records',
  'Dead-lettered',
  'Duration',
  'Checkpoint after',
] as const;

/**
 * A run's id, as a link to its row (`#run-<id>`: the poller page scrolls to it) and, folded
 * idle runs, the ids the line stands for. Its JSON is GET /pollers/:name/runs/:id.
 */
function runLink(run: RunView) {
  if (run.id === null) return html`${run.epoch}`;
  const ids = run.folded ? `${run.folded.first_id}–${run.id}` : String(run.id);
  return html`<a href="#run-${run.id}">${ids}</a>`;
}

/**
 * A run's error under it, on the whole width of the table: errors are long (a URL, what the
 * upstream said), and in a column of their own they pushed the table past the page. A
 * skipped trigger's reason is a note, not an error: it did not fail.
 */
function errorRow(run: RunView) {
  if (run.error === null) return '';
  const kind = run.outcome === 'skipped' ? 'muted' : 'error';
  return html`<tr class="run-error ${run.outcome}" data-outcome="${run.outcome}">
    <td colspan="${COLUMNS.length}" class="${kind}">${errorText(run.error, `run-error-${run.id ?? run.epoch}`)}</td>
  </tr>`;
}

/** The run history, newest first: what started each run, how it ended, what it did and how long it took. */
export function runTable(runs: RunView[]) {
  if (runs.length === 0) return html`<p class="muted">No runs yet.</p>`;
  return html`<div class="scroll">
    <table class="runs">
      <thead>
        <tr>${COLUMNS.map((column) => html`<th>${column}</th>`)}</tr>
      </thead>
      <tbody>
        ${runs.map(
          (
            run,
          ) => html`<tr class="run ${run.outcome}" data-outcome="${run.outcome}"${run.id === null ? '' : html` id="run-${run.id}"`}>
            <td class="nowrap" data-label="Finished">${when(run.finished_at)}</td>
            <td title="lease epoch ${run.epoch}" data-label="Run">${runLink(run)}</td>
            <td data-label="Trigger">${run.trigger}</td>
            <td data-label="Outcome"><span class="outcome ${run.outcome}">${run.outcome}</span></td>
            <td class="num" data-label="Windows">${run.windows}</td>
            <td class="num" data-label="Pages"${run.child_requests === undefined ? '' : html` title="${run.child_requests} of them for children (source.children)"`}>${run.pages}${run.child_requests === undefined ? '' : html` <span class="muted">(${run.child_requests} children)</span>`}</td>
            <td class="num" data-label="Records">${run.records}</td>
            <td class="num" data-label="Dead-lettered">${run.dead_lettered}</td>
            <td class="nowrap" data-label="Duration">${elapsed(run.started_at, run.finished_at)}</td>
            <td class="nowrap" data-label="Checkpoint after">${when(run.checkpoint)}</td>
          </tr>
          ${errorRow(run)}`,
        )}
      </tbody>
    </table>
  </div>`;
}
