import { html } from 'hono/html';
import type { RunView } from '../../poller/status.ts';
import { elapsed, when } from './format.ts';

/**
 * The run history, newest first: what started each run, how it ended, what it did and how
 * long it took. A skipped trigger's reason is a note, not an error: it did not fail.
 */
/**
 * A run's id, as a link to its row (`#run-<id>`: the poller page scrolls to it) and, folded
 * idle runs, the ids the line stands for. Its JSON is GET /pollers/:name/runs/:id.
 */
function runLink(run: RunView) {
  if (run.id === null) return html`${run.epoch}`;
  const ids = run.folded ? `${run.folded.first_id}–${run.id}` : String(run.id);
  return html`<a href="#run-${run.id}">${ids}</a>`;
}

export function runTable(runs: RunView[]) {
  if (runs.length === 0) return html`<p class="muted">No runs yet.</p>`;
  return html`<div class="scroll">
    <table class="runs">
      <thead>
        <tr>
          <th>Finished</th><th>Run</th><th>Trigger</th><th>Outcome</th><th>Windows</th><th>Pages</th>
          <th>Records</th><th>Dead-lettered</th><th>Duration</th><th>Checkpoint after</th><th>Error</th>
        </tr>
      </thead>
      <tbody>
        ${runs.map(
          (
            run,
          ) => html`<tr class="run ${run.outcome}" data-outcome="${run.outcome}"${run.id === null ? '' : html` id="run-${run.id}"`}>
            <td class="nowrap">${when(run.finished_at)}</td>
            <td title="lease epoch ${run.epoch}">${runLink(run)}</td>
            <td>${run.trigger}</td>
            <td><span class="outcome ${run.outcome}">${run.outcome}</span></td>
            <td class="num">${run.windows}</td>
            <td class="num">${run.pages}</td>
            <td class="num">${run.records}</td>
            <td class="num">${run.dead_lettered}</td>
            <td class="nowrap">${elapsed(run.started_at, run.finished_at)}</td>
            <td class="nowrap">${when(run.checkpoint)}</td>
            <td class="${run.outcome === 'skipped' ? 'muted' : 'error'}">${run.error ?? ''}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}
