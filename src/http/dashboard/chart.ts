import { html } from 'hono/html';
import type { RunView } from '../../poller/status.ts';

const WIDTH = 560;
const HEIGHT = 110;
const PAD = 22;

/**
 * An inline SVG over the run history, oldest to newest: the lag at the end of each run
 * (line) and the records it delivered (bars). No script, no external asset.
 */
export function runChart(runs: RunView[]) {
  const history = runs
    .filter((run) => run.outcome !== 'skipped')
    .slice(0, 60)
    .reverse();
  if (history.length === 0) return html`<p class="muted">No runs yet.</p>`;
  const lags = history.map((run) =>
    run.checkpoint === null
      ? 0
      : Math.max(0, (Date.parse(run.finished_at) - Date.parse(run.checkpoint)) / 1000),
  );
  const records = history.map((run) => run.records);
  const maxLag = Math.max(1, ...lags);
  const maxRecords = Math.max(1, ...records);
  const step = (WIDTH - 2 * PAD) / Math.max(1, history.length - 1);
  const x = (index: number) => PAD + index * step;
  const y = (value: number, max: number) => HEIGHT - PAD - (value / max) * (HEIGHT - 2 * PAD);
  const line = lags
    .map((lag, index) => `${x(index).toFixed(1)},${y(lag, maxLag).toFixed(1)}`)
    .join(' ');
  const barWidth = Math.max(2, Math.min(12, step * 0.6));
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img"
    aria-label="lag and records per run over the last ${history.length} runs">
    ${records.map(
      (count, index) =>
        html`<rect class="bar" x="${(x(index) - barWidth / 2).toFixed(1)}" y="${y(count, maxRecords).toFixed(1)}"
          width="${barWidth.toFixed(1)}" height="${(HEIGHT - PAD - y(count, maxRecords)).toFixed(1)}"><title>${count} records</title></rect>`,
    )}
    <polyline class="lag" points="${line}" />
    ${lags.map(
      (lag, index) =>
        html`<circle class="lag-point" cx="${x(index).toFixed(1)}" cy="${y(lag, maxLag).toFixed(1)}" r="2.5"><title>lag ${Math.round(lag)}s</title></circle>`,
    )}
    <text x="${PAD}" y="12">lag (max ${Math.round(maxLag)}s)</text>
    <text x="${WIDTH - PAD}" y="12" text-anchor="end">records/run (max ${maxRecords})</text>
  </svg>`;
}
