import { createRoute, z } from '@hono/zod-openapi';
import { fleetGroups } from '../../fleet/lists.ts';
import type { PollerStatus } from '../../poller/status.ts';
import { TABLES } from '../../poller/store/index.ts';
import type { FleetGroup } from '../../registry/registry.ts';
import { freshnessFamilies } from '../freshness-metrics.ts';
import { guarded, readRefusals } from '../openapi/access.ts';
import { apiRoutes } from '../openapi/api-routes.ts';
import { pollerStatuses } from '../poller-statuses.ts';
import { type MetricFamily, renderMetrics } from '../prometheus.ts';

const seconds = (iso: string | null) => (iso === null ? 0 : Date.parse(iso) / 1000);

/**
 * Series per fleet family at most: a METRICS_LABELS key with a value per poller (a tenant id)
 * would otherwise make a series per poller, which Prometheus bills and slows on. The smaller
 * groups beyond it are summed into one whose labels are all `other`.
 */
const MAX_FLEET_GROUPS = 500;

/** The label keys METRICS_LABELS names (comma-separated): the fleet's series are split by them. */
function metricsLabels(env: Env): string[] {
  return (env.METRICS_LABELS ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter((key) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
    .slice(0, 5);
}

/**
 * The fleet in aggregate, from the registry: pollers by state and kind (and by the label keys
 * METRICS_LABELS names), how many are at fault and their dead letters. As many series as
 * there are distinct groups, never one per poller, and at most MAX_FLEET_GROUPS.
 */
async function fleetFamilies(env: Env): Promise<MetricFamily[]> {
  const keys = metricsLabels(env);
  const groups = await fleetGroups(env, keys, MAX_FLEET_GROUPS);
  const family = (name: string, help: string, value: (g: FleetGroup) => number): MetricFamily => ({
    name,
    help,
    type: 'gauge',
    samples: groups.map((group) => ({
      labels: { state: group.state ?? 'unknown', kind: group.kind, ...group.labels },
      value: value(group),
    })),
  });
  return [
    family(
      'tidemark_fleet_pollers',
      'Pollers, static and runtime, by state (and by METRICS_LABELS).',
      (g) => g.count,
    ),
    family(
      'tidemark_fleet_pollers_at_fault',
      'Pollers /healthz counts as at fault.',
      (g) => g.atFault,
    ),
    family(
      'tidemark_fleet_dead_letters',
      'Dead letters held by the pollers of each group.',
      (g) => g.deadLetters,
    ),
  ];
}

const scrape = createRoute({
  method: 'get',
  path: '/',
  summary: 'Prometheus metrics: each static poller, and the fleet in aggregate',
  ...guarded('read'),
  responses: {
    200: {
      description: 'The Prometheus text format, version 0.0.4.',
      content: { 'text/plain': { schema: z.string() } },
    },
    ...readRefusals,
  },
});

/**
 * GET /metrics (read access), in the Prometheus text format: each static poller's own series
 * (POLLERS fits in 5 KB: a few dozen pollers at most), and the whole fleet, runtime pollers
 * included, in aggregate (a runtime poller's own figures are in GET /status/:name).
 */
export const metricsRoutes = apiRoutes().openapi(scrape, async (c) => {
  const { pollers } = await pollerStatuses(c.env);
  const statuses = pollers.map((entry) => entry.status);
  /** One sample per poller. */
  const perPoller =
    (type: 'gauge' | 'counter') =>
    (name: string, help: string, value: (s: PollerStatus) => number): MetricFamily => ({
      name,
      help,
      type,
      samples: statuses.map((s) => ({ labels: { poller: s.name }, value: value(s) })),
    });
  const gauge = perPoller('gauge');
  const counter = perPoller('counter');
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
    counter(
      'tidemark_records_delivered_total',
      'Updates delivered.',
      (s) => s.counters.records_delivered,
    ),
    gauge('tidemark_dead_letters', 'Updates held as dead letters.', (s) => s.dead_letters.count),
    counter(
      'tidemark_dead_letters_pruned_total',
      'Dead letters pruned for age (dead_letter_retention) or beyond the cap.',
      (s) => s.counters.dead_letters_pruned,
    ),
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
      'tidemark_reconcile_held_deletes',
      'Deletes a reconciliation holds: more than max_deletes, awaiting a confirm (0: none held).',
      (s) => s.reconcile?.held?.deletes ?? 0,
    ),
    gauge(
      'tidemark_reconcile_last_listing_timestamp_seconds',
      'When the last complete reconciliation listing finished, in unix seconds (0: none yet).',
      (s) => seconds(s.reconcile?.last_listing?.finished_at ?? null),
    ),
    gauge(
      'tidemark_auth_reconnect_needed',
      "1 when the source's OAuth provider refused the refresh token: a person must give a new one.",
      (s) => (s.auth?.state === 'reconnect_needed' ? 1 : 0),
    ),
    gauge(
      'tidemark_misconfigured',
      '1 when the poller cannot run until its config or credentials are fixed.',
      (s) => (s.state === 'misconfigured' ? 1 : 0),
    ),
  ];
  families.push(...freshnessFamilies(statuses));
  families.push(...(await fleetFamilies(c.env)));
  return c.text(renderMetrics(families), 200, {
    'content-type': 'text/plain; version=0.0.4; charset=utf-8',
  });
});
