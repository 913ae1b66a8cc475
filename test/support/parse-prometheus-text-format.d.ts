declare module 'parse-prometheus-text-format' {
  /** One metric family, as prom2json would print it. */
  export interface MetricFamily {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'SUMMARY' | 'HISTOGRAM' | 'UNTYPED';
    metrics: { value: string; labels?: Record<string, string> }[];
  }
  /** Parses Prometheus text exposition format; throws on malformed input. */
  export default function parsePrometheusTextFormat(text: string): MetricFamily[];
}
