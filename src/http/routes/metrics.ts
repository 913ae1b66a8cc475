import { Hono } from 'hono';
import { TABLES } from '../../poller/sqlite-store.ts';
import type { PollerStatus } from '../../poller/status.ts';
import { requireToken } from '../auth.ts';
import { pollerStatuses } from '../poller-statuses.ts';
import { type MetricFamily, renderMetrics } from '../prometheus.ts';

const seconds = (iso: string | null) => (iso === null ? 0 : Date.parse(iso) / 1000);

/** GET /metrics: every poller's state in the Prometheus text format (read access). */
export const metricsRoutes = new Hono<{ Bindings: Env }>().get(
  '/',
  requireToken('read'),
  async (c) => {
    const { pollers } = await pollerStatuses(c.env);
    const statuses = pollers.map((entry) => entry.status);
    const gauge = (
      name: string,
      help: string,
      value: (s: PollerStatus) => number,
    ): MetricFamily => ({
      name,
      help,
      type: 'gauge',
      samples: statuses.map((s) => ({ labels: { poller: s.name }, value: value(s) })),
    });
    const perTable = (name: string, help: string, field: 'rows' | 'bytes'): MetricFamily => ({
      name,
      help,
      type: 'gauge',
      samples: statuses.flatMap((s) =>
        TABLES.map((table) => ({
          labels: { poller: s.name, table },
          value: s.storage.tables[table][field],
        })),
      ),
    });
    const families: MetricFamily[] = [
      gauge(
        'tidemark_checkpoint_timestamp_seconds',
        'The checkpoint C, in unix seconds (0 before the first run).',
        (s) => seconds(s.checkpoint),
      ),
      gauge('tidemark_lag_seconds', 'Now minus the checkpoint.', (s) => s.lag_seconds ?? 0),
      gauge('tidemark_lease_held', '1 while a run holds the lease.', (s) => (s.lease.held ? 1 : 0)),
      {
        name: 'tidemark_runs_total',
        help: 'Runs and triggers by outcome.',
        type: 'counter',
        samples: statuses.flatMap((s) =>
          (
            [
              ['success', s.counters.successes],
              ['failed', s.counters.failures],
              ['continued', s.counters.continued],
              ['skipped', s.counters.skipped],
              ['recovered', s.counters.recoveries],
            ] as const
          ).map(([outcome, value]) => ({ labels: { poller: s.name, outcome }, value })),
        ),
      },
      {
        name: 'tidemark_records_delivered_total',
        help: 'Updates delivered.',
        type: 'counter',
        samples: statuses.map((s) => ({
          labels: { poller: s.name },
          value: s.counters.records_delivered,
        })),
      },
      gauge('tidemark_dead_letters', 'Updates held as dead letters.', (s) => s.dead_letters.count),
      {
        name: 'tidemark_dead_letters_pruned_total',
        help: 'Dead letters pruned for age (dead_letter_retention) or beyond the cap.',
        type: 'counter',
        samples: statuses.map((s) => ({
          labels: { poller: s.name },
          value: s.counters.dead_letters_pruned,
        })),
      },
      perTable('tidemark_storage_rows', "Rows in each table of the poller's storage.", 'rows'),
      perTable(
        'tidemark_storage_bytes',
        "Approximate bytes in each table of the poller's storage.",
        'bytes',
      ),
      gauge('tidemark_last_run_duration_seconds', 'Wall time of the last run.', (s) =>
        s.last_run
          ? (Date.parse(s.last_run.finished_at) - Date.parse(s.last_run.started_at)) / 1000
          : 0,
      ),
      gauge(
        'tidemark_rate_limited_until_timestamp_seconds',
        'The upstream asked for no request before this, in unix seconds (0: no limit).',
        (s) => seconds(s.rate_limited_until),
      ),
      gauge(
        'tidemark_misconfigured',
        '1 when the poller cannot run until its config or credentials are fixed.',
        (s) => (s.state === 'misconfigured' ? 1 : 0),
      ),
    ];
    return c.text(renderMetrics(families), 200, {
      'content-type': 'text/plain; version=0.0.4; charset=utf-8',
    });
  },
);
