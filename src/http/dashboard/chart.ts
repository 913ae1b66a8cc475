import { html } from 'hono/html';
import { formatDuration } from '../../config/duration.ts';
import type { RunView } from '../../poller/status.ts';
import { decodedForDisplay } from './error-text.ts';
import { plural, when } from './format.ts';

const WIDTH = 640;
const HEIGHT = 230;
const MARGIN = { left: 64, right: 64, top: 24, bottom: 44 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
const BOTTOM = MARGIN.top + PLOT_H;
const RIGHT = MARGIN.left + PLOT_W;

/** Outcomes drawn as a failed run: it failed, or it died holding the lease. */
const FAILED = new Set(['failed', 'recovered']);

/** Lag axis tops, in seconds: round durations whose halves are round too. */
const LAG_STEPS = [10, 20, 60, 120, 600, 1200, 1800, 3600, 7200, 14_400, 43_200, 86_400];
const TWO_DAYS = 2 * 86_400;
const MIN_SPAN_MS = 60_000;

/** One run as the chart draws it. */
interface Point {
  at: number;
  lag: number;
  records: number;
  run: RunView;
}

/** Runs that did something (not skipped), oldest first, with the lag each left behind. */
function pointsOf(runs: RunView[]): Point[] {
  return runs
    .filter((run) => run.outcome !== 'skipped' && !Number.isNaN(Date.parse(run.finished_at)))
    .map((run) => {
      const at = Date.parse(run.finished_at);
      const checkpoint = run.checkpoint === null ? Number.NaN : Date.parse(run.checkpoint);
      const lag = Number.isNaN(checkpoint) ? 0 : Math.max(0, (at - checkpoint) / 1000);
      return { at, lag, records: run.records, run };
    })
    .sort((a, b) => a.at - b.at);
}

/** The smallest 1, 2 or 5 times a power of ten at or above `value`. */
function niceCount(value: number): number {
  for (let power = 1; ; power *= 10) {
    const top = [1, 2, 5].map((factor) => factor * power).find((candidate) => candidate >= value);
    if (top !== undefined) return top;
  }
}

/** The lag axis top in seconds: a round duration at or above `value`. */
function niceLag(value: number): number {
  const step = LAG_STEPS.find((candidate) => candidate >= value);
  return step ?? Math.ceil(value / TWO_DAYS) * TWO_DAYS;
}

/** A time tick's label: seconds for short spans, the date for long ones. */
function timeLabel(ms: number, span: number): string {
  const iso = new Date(ms).toISOString();
  if (span > 2 * 86_400_000) return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
  if (span < 10 * 60_000) return iso.slice(11, 19);
  return iso.slice(11, 16);
}

const fixed = (value: number) => value.toFixed(1);

/** Where things go: the time span, the two axes' tops, and the maps from data to the plot. */
interface Scale {
  t0: number;
  t1: number;
  lagTop: number;
  recordTop: number;
  /** alert_after in ms, or null when the config is invalid. */
  alertAfterMs: number | null;
  /** Whether the lag axis reaches alert_after; when not, the threshold is named above the plot. */
  thresholdOnAxis: boolean;
  x: (at: number) => number;
  yLag: (seconds: number) => number;
  yRecords: (count: number) => number;
}

function scaleOf(points: Point[], alertAfterMs: number | null): Scale {
  const first = points[0]?.at ?? 0;
  const last = points.at(-1)?.at ?? first;
  // At least a minute wide, so that the time ticks (a third apart) never read the same.
  const middle = (first + last) / 2;
  const [t0, t1] =
    last - first < MIN_SPAN_MS
      ? [middle - MIN_SPAN_MS / 2, middle + MIN_SPAN_MS / 2]
      : [first, last];
  // The axis fits the lag observed: alert_after is on it only once the lag came within half
  // of it, or a lag of seconds under an alert_after of an hour is a flat line on the floor.
  const maxLag = Math.max(0, ...points.map((point) => point.lag));
  const alertAfter = alertAfterMs === null ? null : alertAfterMs / 1000;
  const thresholdOnAxis = alertAfter !== null && maxLag * 2 >= alertAfter;
  // Headroom over the threshold, so that its line is never drawn on the frame.
  const threshold = thresholdOnAxis && alertAfter !== null ? alertAfter * 1.25 : 0;
  const lagTop = niceLag(Math.max(1, threshold, maxLag));
  const recordTop = niceCount(Math.max(1, ...points.map((point) => point.records)));
  return {
    t0,
    t1,
    lagTop,
    recordTop,
    alertAfterMs,
    thresholdOnAxis,
    x: (at) => MARGIN.left + ((at - t0) / (t1 - t0)) * PLOT_W,
    yLag: (seconds) => BOTTOM - (seconds / lagTop) * PLOT_H,
    yRecords: (count) => BOTTOM - (count / recordTop) * PLOT_H,
  };
}

/** Shares of the height where the grid lines and the y ticks go. */
const SHARES = [0, 0.5, 1];

function grid() {
  return html`<g class="grid">${SHARES.map((share) => {
    const y = fixed(BOTTOM - share * PLOT_H);
    return html`<line x1="${MARGIN.left}" x2="${RIGHT}" y1="${y}" y2="${y}" />`;
  })}</g>`;
}

function bars(points: Point[], scale: Scale) {
  const width = Math.max(1.5, Math.min(8, (PLOT_W / points.length) * 0.5));
  return html`<g class="bars">${points.map((point) => {
    const top = scale.yRecords(point.records);
    return html`<rect class="bar" x="${fixed(scale.x(point.at) - width / 2)}" y="${fixed(top)}"
      width="${fixed(width)}" height="${fixed(BOTTOM - top)}"><title>${when(point.run.finished_at)}: ${plural(point.records, 'record')}</title></rect>`;
  })}</g>`;
}

function thresholdLine({ alertAfterMs, thresholdOnAxis, yLag }: Scale) {
  if (alertAfterMs === null) return '';
  if (!thresholdOnAxis) {
    return html`<g class="threshold above"><text x="${RIGHT}" y="${MARGIN.top - 4}" text-anchor="end">alert_after ${formatDuration(alertAfterMs)}: far above this lag</text></g>`;
  }
  const y = yLag(alertAfterMs / 1000);
  return html`<g class="threshold"><line x1="${MARGIN.left}" x2="${RIGHT}" y1="${fixed(y)}" y2="${fixed(y)}" />
    <text x="${RIGHT - 4}" y="${fixed(y - 4)}" text-anchor="end">alert_after ${formatDuration(alertAfterMs)}</text></g>`;
}

/** The lag line, a dot per run, and a red cross and rule for each failed one. */
function lagLine(points: Point[], { x, yLag }: Scale) {
  const line = points.map((point) => `${fixed(x(point.at))},${fixed(yLag(point.lag))}`).join(' ');
  return html`<polyline class="lag" points="${line}" />
    ${points.map((point) => {
      const [cx, cy] = [x(point.at), yLag(point.lag)];
      const { run } = point;
      if (!FAILED.has(run.outcome)) {
        return html`<circle class="lag-point" cx="${fixed(cx)}" cy="${fixed(cy)}" r="2.5"><title>${when(run.finished_at)}: lag ${formatDuration(Math.round(point.lag) * 1000)}</title></circle>`;
      }
      return html`<g class="failed" data-outcome="${run.outcome}">
        <line x1="${fixed(cx)}" x2="${fixed(cx)}" y1="${MARGIN.top}" y2="${BOTTOM}" />
        <path d="M${fixed(cx - 4)},${fixed(cy - 4)}l8,8m0,-8l-8,8" />
        <title>${run.outcome} run, ${when(run.finished_at)}${run.error ? `: ${decodedForDisplay(run.error)}` : ''}</title></g>`;
    })}`;
}

function axes(scale: Scale) {
  const { t0, t1, lagTop, recordTop } = scale;
  const times = [0, 1 / 3, 2 / 3, 1].map((share) => t0 + share * (t1 - t0));
  const anchor = (index: number) =>
    index === 0 ? 'start' : index === times.length - 1 ? 'end' : 'middle';
  const middle = MARGIN.top + PLOT_H / 2;
  return html`<g class="axis">
    <line x1="${MARGIN.left}" x2="${RIGHT}" y1="${BOTTOM}" y2="${BOTTOM}" />
    <line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${BOTTOM}" />
    <line x1="${RIGHT}" x2="${RIGHT}" y1="${MARGIN.top}" y2="${BOTTOM}" />
    ${SHARES.map((share) => {
      const y = fixed(BOTTOM - share * PLOT_H + 3);
      const records = share * recordTop;
      return html`<text class="tick lag-tick" x="${MARGIN.left - 5}" y="${y}" text-anchor="end">${formatDuration(Math.round(share * lagTop) * 1000)}</text>
        ${Number.isInteger(records) ? html`<text class="tick records-tick" x="${RIGHT + 5}" y="${y}">${records}</text>` : ''}`;
    })}
    ${times.map(
      (at, index) =>
        html`<text class="tick time-tick" x="${fixed(scale.x(at))}" y="${BOTTOM + 14}" text-anchor="${anchor(index)}">${timeLabel(at, t1 - t0)}</text>`,
    )}
    <text class="axis-title" x="12" y="${middle}" text-anchor="middle" transform="rotate(-90 12 ${middle})">lag</text>
    <text class="axis-title" x="${WIDTH - 12}" y="${middle}" text-anchor="middle"
      transform="rotate(90 ${WIDTH - 12} ${middle})">records per run</text>
    <text class="axis-title" x="${MARGIN.left + PLOT_W / 2}" y="${HEIGHT - 6}" text-anchor="middle">time (UTC)</text>
  </g>`;
}

function legend(alertAfterMs: number | null) {
  return html`<ul class="legend">
    <li><span class="swatch lag"></span>lag after each run</li>
    <li><span class="swatch bar"></span>records per run</li>
    <li><span class="swatch failed"></span>failed run</li>
    ${alertAfterMs === null ? '' : html`<li><span class="swatch threshold"></span>alert_after (${formatDuration(alertAfterMs)})</li>`}
  </ul>`;
}

/**
 * An inline SVG over the run history, drawn on the server: time on the x axis, the lag each
 * run left behind (line, left axis) and the records it delivered (bars, right axis), failed
 * runs marked in red, and the alert_after threshold as a dashed line (or named above the plot
 * when the lag stayed far below it: the axis fits the lag observed). No script, no style
 * attribute, no external asset: the page's nonce-tagged style block colours it by class.
 */
export function runChart(runs: RunView[], alertAfterMs: number | null) {
  const points = pointsOf(runs);
  if (points.length === 0) return html`<p class="muted">No runs yet.</p>`;
  const scale = scaleOf(points, alertAfterMs);
  const failed = points.filter((point) => FAILED.has(point.run.outcome)).length;
  const span = `${when(new Date(points[0]?.at ?? 0).toISOString())} to ${when(new Date(points.at(-1)?.at ?? 0).toISOString())}`;
  const threshold = alertAfterMs === null ? '' : `, alert_after ${formatDuration(alertAfterMs)}`;
  const summary = `Lag and records per run: ${plural(points.length, 'run')} from ${span}, ${failed} failed${threshold}`;
  return html`<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${summary}"
    data-runs="${points.length}" data-failed="${failed}">
    <title>${summary}</title>
    ${grid()} ${bars(points, scale)} ${thresholdLine(scale)} ${lagLine(points, scale)} ${axes(scale)}
  </svg>
  ${legend(alertAfterMs)}`;
}
