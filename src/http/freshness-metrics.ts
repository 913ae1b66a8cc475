import type { PollerStatus } from '../poller/status.ts';
import type { MetricFamily } from './prometheus.ts';

/**
 * The freshness series of each poller: observed lateness as a Prometheus histogram (all time,
 * buckets of powers of 4 seconds), next to lag_allowance, the verdict on it, near misses, and
 * nudges received, coalesced, acted on and ignored.
 */
export function freshnessFamilies(statuses: PollerStatus[]): MetricFamily[] {
  const fresh = statuses.flatMap((s) => (s.freshness === null ? [] : [{ s, f: s.freshness }]));
  const per = (
    name: string,
    help: string,
    type: 'gauge' | 'counter',
    value: (f: NonNullable<PollerStatus['freshness']>, s: PollerStatus) => number,
  ): MetricFamily => ({
    name,
    help,
    type,
    samples: fresh.map(({ s, f }) => ({ labels: { poller: s.name }, value: value(f, s) })),
  });
  return [
    {
      name: 'tidemark_lateness_seconds',
      help: 'How long after their updated_at late records became visible upstream (a lower bound, measured; all time).',
      type: 'histogram',
      samples: fresh.flatMap(({ s, f }) => {
        const all = f.lateness.all_time;
        return [
          ...all.buckets.map(({ le, count }) => ({
            suffix: '_bucket',
            labels: { poller: s.name, le },
            value: count,
          })),
          { suffix: '_sum', labels: { poller: s.name }, value: all.sum_seconds },
          { suffix: '_count', labels: { poller: s.name }, value: all.count },
        ];
      }),
    },
    per(
      'tidemark_lateness_max_seconds',
      'The highest observed lateness of the last 24 hours.',
      'gauge',
      (f) => f.lateness.last_24h.max_seconds ?? 0,
    ),
    per(
      'tidemark_lag_allowance_seconds',
      'The configured lag_allowance, to compare observed lateness with.',
      'gauge',
      (f) => f.lag_allowance_seconds ?? 0,
    ),
    per(
      'tidemark_lateness_ratio',
      'The highest lateness of the last 24 hours over lag_allowance: a warning above 0.5, at risk above 0.8.',
      'gauge',
      (f) => {
        if (f.lateness.last_24h.count === 0) return 0;
        return f.lateness.ratio ?? Number.POSITIVE_INFINITY;
      },
    ),
    per(
      'tidemark_lateness_warning',
      '1 when observed lateness is above half of lag_allowance (or the poller is at risk).',
      'gauge',
      (f) => (f.lateness.risk === 'ok' ? 0 : 1),
    ),
    per(
      'tidemark_at_risk',
      '1 when observed lateness is above 80% of lag_allowance, or a near miss happened in the last 24 hours.',
      'gauge',
      (_f, s) => (s.at_risk ? 1 : 0),
    ),
    per(
      'tidemark_near_misses_total',
      'Records later than lag_allowance, caught only by overlap.',
      'counter',
      (f) => f.lateness.all_time.near_misses,
    ),
    per('tidemark_nudges_received_total', 'Nudges received.', 'counter', (f) => f.nudges.received),
    per(
      'tidemark_nudges_coalesced_total',
      'Nudges folded into one already pending.',
      'counter',
      (f) => f.nudges.coalesced,
    ),
    per(
      'tidemark_nudges_acted_on_total',
      'Runs started with a nudge pending.',
      'counter',
      (f) => f.nudges.acted_on,
    ),
    per(
      'tidemark_nudges_ignored_total',
      'Nudges received while paused or disabled.',
      'counter',
      (f) => f.nudges.ignored,
    ),
  ];
}
