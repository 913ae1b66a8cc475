/** One metric family in the Prometheus text exposition format (version 0.0.4). */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'gauge' | 'counter' | 'histogram';
  /** `suffix`: a histogram's `_bucket`, `_sum` and `_count` series. */
  samples: { labels: Record<string, string>; value: number; suffix?: string }[];
}

/** Renders metric families as Prometheus text: HELP, TYPE, then one line per sample. */
export function renderMetrics(families: MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      const labels = Object.entries(sample.labels)
        .map(([key, value]) => `${key}="${escapeLabel(value)}"`)
        .join(',');
      const name = `${family.name}${sample.suffix ?? ''}`;
      lines.push(`${name}${labels ? `{${labels}}` : ''} ${formatValue(sample.value)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
