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
