import { html } from 'hono/html';
import type { RunView } from '../../poller/status.ts';
import { elapsed, when } from './format.ts';

/**
 * The run history, newest first: what started each run, how it ended, what it did and how
 * long it took. A skipped trigger's reason is a note, not an error: it did not fail.
 */
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
          (run) => html`<tr class="run ${run.outcome}" data-outcome="${run.outcome}">
            <td class="nowrap">${when(run.finished_at)}</td>
            <td>${run.epoch}</td>
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
