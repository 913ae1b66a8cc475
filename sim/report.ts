import type { MirrorResult } from './mirror.ts';
import { percentile, type SimResult } from './simulate.ts';
import type { StrategyName } from './strategies.ts';
import { START } from './world.ts';

/** One row of a scenario's table: a strategy summed over seeds. */
export interface Row {
  strategy: StrategyName;
  label: string;
  seeds: number;
  produced: number;
  lost: number;
  duplicates: number;
  deadLettered: number;
  pending: number;
  p50: number;
  p99: number;
  max: number;
  maxConcurrentRuns: number;
}

export function summarize(strategy: StrategyName, label: string, results: SimResult[]): Row {
  const delays = results.flatMap((result) => result.delays);
  const sum = (pick: (result: SimResult) => number) =>
    results.reduce((total, result) => total + pick(result), 0);
  return {
    strategy,
    label,
    seeds: results.length,
    produced: sum((r) => r.produced),
    lost: sum((r) => r.lost),
    duplicates: sum((r) => r.duplicates),
    deadLettered: sum((r) => r.deadLettered),
    pending: sum((r) => r.pending),
    p50: percentile(delays, 50),
    p99: percentile(delays, 99),
    max: delays.length === 0 ? 0 : Math.max(...delays),
    maxConcurrentRuns: Math.max(...results.map((r) => r.maxConcurrentRuns)),
  };
}

const seconds = (value: number) => (value >= 100 ? `${Math.round(value)}` : value.toFixed(1));

/** A Markdown table for one scenario. */
export function table(rows: Row[]): string {
  const lines = [
    '| strategy | produced | lost | duplicates | dead letters | still due | delay p50 / p99 / max (s) | max runs at once |',
    '|---|---:|---:|---:|---:|---:|---|---:|',
  ];
  for (const row of rows) {
    const lost = row.lost > 0 ? `**${row.lost}**` : '0';
    lines.push(
      `| ${row.label} | ${row.produced} | ${lost} | ${row.duplicates} | ${row.deadLettered} | ${row.pending} | ${seconds(row.p50)} / ${seconds(row.p99)} / ${seconds(row.max)} | ${row.maxConcurrentRuns} |`,
    );
  }
  return lines.join('\n');
}

const COLORS: Record<StrategyName, string> = {
  lookback: '#d9480f',
  'end-time': '#f59f00',
  'partial-advance': '#7048e8',
  'short-lease': '#1c7ed6',
  tidemark: '#2b8a3e',
};

/** An SVG line chart: mean lost updates per run against downtime length, per strategy. */
export function downtimeChart(
  points: { strategy: StrategyName; label: string; series: { downtime: number; lost: number }[] }[],
): string {
  const width = 720;
  const height = 360;
  const left = 60;
  const right = 230;
  const top = 30;
  const bottom = 50;
  const xs = points[0]?.series.map((point) => point.downtime) ?? [0];
  const maxX = Math.max(1, ...xs);
  const maxY = Math.max(1, ...points.flatMap((p) => p.series.map((s) => s.lost)));
  const x = (value: number) => left + (value / maxX) * (width - left - right);
  const y = (value: number) => height - bottom - (value / maxY) * (height - top - bottom);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${left}" y="18" font-weight="600">Lost updates per run vs downtime (mean over seeds)</text>`,
    `<line x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}" stroke="#888"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${height - bottom}" stroke="#888"/>`,
    `<text x="${(left + width - right) / 2}" y="${height - 12}" text-anchor="middle">downtime (cron intervals)</text>`,
    `<text x="14" y="${(top + height - bottom) / 2}" transform="rotate(-90 14 ${(top + height - bottom) / 2})" text-anchor="middle">lost updates</text>`,
  ];
  for (const value of xs) {
    parts.push(
      `<text x="${x(value)}" y="${height - bottom + 16}" text-anchor="middle">${value}</text>`,
    );
  }
  for (const fraction of [0, 0.5, 1]) {
    const value = Math.round(maxY * fraction);
    parts.push(`<text x="${left - 6}" y="${y(value) + 4}" text-anchor="end">${value}</text>`);
  }
  points.forEach((point, index) => {
    const color = COLORS[point.strategy];
    const path = point.series
      .map((s) => `${x(s.downtime).toFixed(1)},${y(s.lost).toFixed(1)}`)
      .join(' ');
    parts.push(`<polyline points="${path}" fill="none" stroke="${color}" stroke-width="2.5"/>`);
    for (const s of point.series) {
      parts.push(
        `<circle cx="${x(s.downtime).toFixed(1)}" cy="${y(s.lost).toFixed(1)}" r="3" fill="${color}"/>`,
      );
    }
    const legendY = top + 10 + index * 20;
    parts.push(
      `<rect x="${width - right + 16}" y="${legendY - 9}" width="12" height="12" fill="${color}"/>`,
    );
    parts.push(
      `<text x="${width - right + 34}" y="${legendY + 1}">${escapeXml(point.label)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
}

/** "t+12.0 min": a virtual time as minutes into the run. */
function minutesIn(at: number | null): string {
  return at === null ? '—' : `t+${((at - START) / 60_000).toFixed(1)} min`;
}

/** The median of the non-null values, or null. */
function median(values: (number | null)[]): number | null {
  const present = values.filter((value): value is number => value !== null).sort((a, b) => a - b);
  return present.length === 0 ? null : (present[Math.floor((present.length - 1) / 2)] ?? null);
}

/**
 * The lag-growth scenario's table: per strategy, updates lost, when the first was lost, when
 * the first warning and "at risk" came (medians over seeds), and in how many seeds the warning
 * came before the first loss, with the shortest lead.
 */
export function warningTable(rows: { label: string; results: SimResult[] }[]): string {
  const lines = [
    '| strategy | lost | first loss (median) | first warning (median) | first "at risk" (median) | warned before the first loss | shortest lead |',
    '|---|---:|---|---|---|---|---:|',
  ];
  for (const { label, results } of rows) {
    const lost = results.reduce((sum, result) => sum + result.lost, 0);
    const losing = results.filter((result) => result.firstLossAt !== null);
    const ahead = losing.filter(
      (result) =>
        result.firstWarning !== null && result.firstWarning.at < (result.firstLossAt ?? 0),
    );
    const leads = ahead.map((result) => (result.firstLossAt ?? 0) - (result.firstWarning?.at ?? 0));
    const warnedAny = results.some((result) => result.firstWarning !== null);
    const before =
      losing.length === 0
        ? warnedAny
          ? 'nothing lost'
          : '—'
        : `${ahead.length} of ${losing.length} seeds${warnedAny ? '' : ' (never warns)'}`;
    lines.push(
      `| ${label} | ${lost > 0 ? `**${lost}**` : '0'} | ${minutesIn(median(results.map((r) => r.firstLossAt)))} | ${minutesIn(median(results.map((r) => r.firstWarning?.at ?? null)))} | ${minutesIn(median(results.map((r) => r.firstAtRisk?.at ?? null)))} | ${before} | ${leads.length === 0 ? '—' : `${(Math.min(...leads) / 60_000).toFixed(1)} min`} |`,
    );
  }
  return lines.join('\n');
}

const minutes = (ms: number) => (ms / 60_000).toFixed(1);

/**
 * A mirror scenario's table: per way of keeping the mirror, summed over seeds, what the mirror
 * got wrong at the end (after a quiet drain), in how many seeds it converged, how long after
 * the upstream's last change, the longest any record stayed wrong, and what was delivered.
 */
export function mirrorTable(rows: { label: string; results: MirrorResult[] }[]): string {
  const lines = [
    '| how the mirror is kept | ghosts | stale | missing | converged | last change → converged, median / max (min) | longest a record stayed wrong (min) | false deletes | listings held | upserts / deletes delivered |',
    '|---|---:|---:|---:|---|---|---|---:|---:|---|',
  ];
  const bold = (value: number) => (value > 0 ? `**${value}**` : '0');
  for (const { label, results } of rows) {
    const sum = (pick: (result: MirrorResult) => number) =>
      results.reduce((total, result) => total + pick(result), 0);
    const converged = results
      .map((result) => result.convergedAfterMs)
      .filter((ms): ms is number => ms !== null)
      .sort((a, b) => a - b);
    const after =
      converged.length === 0
        ? 'never'
        : `${minutes(converged[Math.floor((converged.length - 1) / 2)] ?? 0)} / ${minutes(converged.at(-1) ?? 0)}${converged.length < results.length ? ' (where it did)' : ''}`;
    const open = results.filter((result) => result.wrongSinceAtEnd !== null).length;
    const longest =
      open > 0
        ? `never put right (${open} of ${results.length} seeds)`
        : minutes(Math.max(...results.map((result) => result.longestWrongMs)));
    lines.push(
      `| ${label} | ${bold(sum((r) => r.ghosts))} | ${bold(sum((r) => r.stale))} | ${bold(sum((r) => r.missing))} | ${converged.length} of ${results.length} seeds | ${after} | ${longest} | ${bold(sum((r) => r.falseDeletes))} | ${sum((r) => r.held)} | ${sum((r) => r.upserts)} / ${sum((r) => r.deletes)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * An SVG line chart of one seed: records the mirror has wrong at each cron tick, per way of
 * keeping it, with the upstream's last change marked.
 */
export function mirrorChart(
  lines: { label: string; color: string; series: { at: number; wrong: number }[] }[],
  lastChangeMs: number,
  title: string,
): string {
  const width = 720;
  const height = 360;
  const left = 60;
  const right = 20;
  const top = 30;
  const bottom = 50 + lines.length * 18;
  const maxX = Math.max(1, ...lines.flatMap((line) => line.series.map((point) => point.at)));
  const maxY = Math.max(1, ...lines.flatMap((line) => line.series.map((point) => point.wrong)));
  const plotBottom = height - bottom;
  const x = (ms: number) => left + (ms / maxX) * (width - left - right);
  const y = (value: number) => plotBottom - (value / maxY) * (plotBottom - top);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${left}" y="18" font-weight="600">${escapeXml(title)}</text>`,
    `<line x1="${left}" y1="${plotBottom}" x2="${width - right}" y2="${plotBottom}" stroke="#888"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${plotBottom}" stroke="#888"/>`,
    `<text x="${(left + width - right) / 2}" y="${plotBottom + 34}" text-anchor="middle">minutes</text>`,
    `<text x="14" y="${(top + plotBottom) / 2}" transform="rotate(-90 14 ${(top + plotBottom) / 2})" text-anchor="middle">records wrong</text>`,
  ];
  for (let minute = 0; minute <= maxX / 60_000; minute += 30) {
    parts.push(
      `<text x="${x(minute * 60_000).toFixed(1)}" y="${plotBottom + 16}" text-anchor="middle">${minute}</text>`,
    );
  }
  for (const fraction of [0, 0.5, 1]) {
    const value = Math.round(maxY * fraction);
    parts.push(`<text x="${left - 6}" y="${y(value) + 4}" text-anchor="end">${value}</text>`);
  }
  parts.push(
    `<line x1="${x(lastChangeMs).toFixed(1)}" y1="${top}" x2="${x(lastChangeMs).toFixed(1)}" y2="${plotBottom}" stroke="#888" stroke-dasharray="4 4"/>`,
    `<text x="${(x(lastChangeMs) + 4).toFixed(1)}" y="${top + 12}">last upstream change</text>`,
  );
  lines.forEach((line, index) => {
    const path = line.series
      .map((point) => `${x(point.at).toFixed(1)},${y(point.wrong).toFixed(1)}`)
      .join(' ');
    parts.push(`<polyline points="${path}" fill="none" stroke="${line.color}" stroke-width="2"/>`);
    const legendY = plotBottom + 52 + index * 18;
    parts.push(
      `<rect x="${left}" y="${legendY - 9}" width="12" height="12" fill="${line.color}"/>`,
      `<text x="${left + 18}" y="${legendY + 1}">${escapeXml(line.label)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
