import { formatDuration } from '../config/duration.ts';
import type { PollerConfig } from '../config/schema.ts';
import type { ChildProgress } from '../engine/children.ts';
import { isoTime, isoTimeOrNull } from '../engine/iso-time.ts';
import type { Json, PollerState, RoundState, RunRecord } from '../engine/ports.ts';
import { skewWarning } from '../engine/skew.ts';
import type { KeyRoleCounts } from '../secrets/key-role.ts';
import type { AuthView } from '../sources/auth/index.ts';
import { reconnectAlert } from './auth-view.ts';
import { type ChildrenView, childrenView } from './children-view.ts';
import { type FreshnessInput, type FreshnessView, freshnessView } from './freshness-view.ts';
import {
  alertsOf,
  type HealthInput,
  healthOf,
  type PollerHealth,
  type Retrying,
  retryingWarning,
} from './health.ts';
import { nextPathWarnings } from './next-path-warning.ts';
import {
  heldAlert,
  type ReconcileInput,
  type ReconcileView,
  reconcileView,
  reconcileWarning,
} from './reconcile-view.ts';
import { type ResumeView, resumeView } from './resume-view.ts';
import {
  type Counters,
  DEAD_LETTER_CAP,
  type PathSighting,
  type TableSizes,
} from './store/index.ts';

export type { PollerHealth } from './health.ts';

/** What `GET /status/:poller` shows. Never a secret, never a record. */
export interface PollerStatus {
  name: string;
  /** ok | warning | running | lagging | silent | failing | paused | misconfigured */
  state: PollerHealth;
  config_errors: string[];
  /** Things that are not failures yet but deserve a look (dead letters, clock skew, a next path never found). */
  warnings: string[];
  /** Why /healthz reports this poller as at fault (empty: it does not). */
  alerts: string[];
  /** When this poller's object first saw it (a trigger or a status call). */
  first_seen_at: string | null;
  /**
   * Where the poller's scope starts: its first checkpoint (start_from, or its first run's
   * start), or an earlier one an admin backfilled from. Updates before it are not its own.
   */
  started_from: string | null;
  checkpoint: string | null;
  lag_seconds: number | null;
  lease: { held: boolean; epoch: number; started_at: string | null; expires_at: string | null };
  last_run: RunView | null;
  next_alarm_at: string | null;
  next_wakeup: { at: string; reason: string } | null;
  consecutive_failures: number;
  /** The upstream's clock minus ours, from its Date header (±1 s). */
  upstream_skew_seconds: number | null;
  /** The upstream asked for no request before this (Retry-After, rate-limit reset). */
  rate_limited_until: string | null;
  /**
   * Updates kept out of the poll loop (R8): how many, since when, how many were pruned, and
   * the bounds that prune them (dead_letter_retention, from the first failure; the cap).
   */
  dead_letters: {
    count: number;
    oldest: string | null;
    pruned: number;
    retention: string | null;
    cap: number;
  };
  counters: Counters;
  /** What the poller's storage holds: each table's rows and approximate bytes. */
  storage: { database_bytes: number; tables: TableSizes };
  /** Paused by an admin. */
  paused: boolean;
  /** The latest admin actions, newest first. */
  audit: { at: string; action: string; detail: Json }[];
  /**
   * Observed lateness above 80% of lag_allowance, or a near miss: an update later than
   * lag_allowance would be missed. Also a warning (state `warning`); see `freshness`.
   */
  at_risk: boolean;
  /** Observed lateness next to lag_allowance, and nudges (null: not read). */
  freshness: FreshnessView | null;
  /** The reconciliation (reconcile): the last listing, what is held or pending (null: none). */
  reconcile: ReconcileView | null;
  /** The source's authentication (source.auth): its kind and token state, never a token (null: none). */
  auth: AuthView | null;
  /** source.resume: the token's age and the round's progress, never the token (null: none). */
  resume: ResumeView | null;
  /** source.children: the child listing a run stopped in (null: the poller has none). */
  children: ChildrenView | null;
  /**
   * The poller's own secrets by the key they are sealed under, after this status's own read
   * of them (which moves them to SECRETS_KEY during a rotation): one still under
   * SECRETS_KEY_PREVIOUS or an unknown key is one a rotation has not moved.
   */
  secrets: {
    count: number;
    under_current_key: number;
    under_previous_key: number;
    under_unknown_key: number;
  };
}

/** The longest fault reason a poller reports to the registry: /healthz lists many. */
export const MAX_FAULT_REASON_CHARS = 200;

/**
 * Why /healthz counts the poller as at fault, for the registry: its first alert, cut short.
 * Alerts never hold a secret (run errors are redacted before they are stored).
 */
export function faultReason(alerts: readonly string[]): string | null {
  const first = alerts[0];
  if (first === undefined) return null;
  return first.length <= MAX_FAULT_REASON_CHARS
    ? first
    : `${first.slice(0, MAX_FAULT_REASON_CHARS - 1)}…`;
}

export interface RunView {
  /** The run's id in its poller's history (GET /pollers/:name/runs/:id); null if not kept. */
  id: number | null;
  /** For idle runs folded into one line: the first id it stands for, and when that one started. */
  folded?: { first_id: number; first_started_at: string };
  epoch: number;
  trigger: string;
  outcome: string;
  started_at: string;
  finished_at: string;
  windows: number;
  pages: number;
  records: number;
  dead_lettered: number;
  /** source.children: the run's requests for children, of `pages`. */
  child_requests?: number;
  error: string | null;
  checkpoint: string | null;
}

const iso = isoTimeOrNull;

/** Idle runs folded into one line of history (poller/store/history.ts). */
type FoldedRuns = { firstId: number; firstStartedAt: number };

/** Shapes a run for JSON. */
export function runView(run: RunRecord & { id?: number | null; folded?: FoldedRuns }): RunView {
  return {
    id: run.id ?? null,
    ...(run.folded === undefined
      ? {}
      : {
          folded: {
            first_id: run.folded.firstId,
            first_started_at: isoTime(run.folded.firstStartedAt),
          },
        }),
    epoch: run.epoch,
    trigger: run.trigger,
    outcome: run.outcome,
    started_at: isoTime(run.startedAt),
    finished_at: isoTime(run.finishedAt),
    windows: run.windows,
    pages: run.pages,
    records: run.records,
    dead_lettered: run.deadLettered,
    ...(run.childRequests === undefined ? {} : { child_requests: run.childRequests }),
    error: run.error,
    checkpoint: iso(run.checkpoint),
  };
}

/** What a poller's health is judged from: a part of what its status shows. */
export interface HealthSources {
  name: string;
  configErrors: string[];
  config: PollerConfig | undefined;
  state: PollerState;
  lastRun: RunRecord | undefined;
  deadLetters: { count: number; oldest: number | null };
  /** R19: the updates failing, stored and retried (null or absent: none). */
  retrying?: Retrying | null;
  firstSeenAt: number | null;
  now: number;
  freshness?: FreshnessInput;
  /** reconcile: where it is (null: the poller has none). */
  reconcile?: ReconcileInput | null;
  /** source.auth: its state (null: the source has none). */
  auth?: AuthView | null;
  /** What the pages showed of the next-page body paths (store/next-paths.ts). */
  nextPaths?: Readonly<Record<string, PathSighting>>;
}

/**
 * The poller's health, its warnings and its alerts: what the status leads with, and all the
 * registry is told after a run (without the rest of the status, which a tick has no use for).
 */
export function assessHealth(input: HealthSources) {
  const { state, config } = input;
  const skew = skewWarning(state.skewMs, config?.lag_allowance ?? 0);
  const fresh = input.freshness ? freshnessView(input.freshness, config) : null;
  const lateness = fresh?.assessment?.warning ?? null;
  const held = heldAlert(input.name, input.reconcile?.state);
  const warnings = [
    deadLetterWarning(input.name, input.deadLetters, config),
    retryingWarning(input.retrying, config, input.now),
    skew,
    lateness,
    held,
    reconcileWarning(input.reconcile?.state),
    ...nextPathWarnings(config, input.nextPaths),
  ].filter((warning): warning is string => warning !== null);
  const health: HealthInput = { ...input, warnings };
  // Held deletes wait for someone: /healthz reports the poller (unless paused or disabled).
  const quiet = state.paused || config?.enabled === false;
  const reconnect = reconnectAlert(input.name, input.auth ?? null);
  const own = [held, reconnect].filter((alert): alert is string => alert !== null && !quiet);
  const alerts = [...alertsOf(health), ...own.filter((alert) => !alertsOf(health).includes(alert))];
  return { state: healthOf(health), warnings, alerts, fresh };
}

/** Builds a poller's status from its stored state. */
export function buildStatus(
  input: HealthSources & {
    alarm: number | null;
    counters: Counters;
    audit: { at: number; action: string; detail: Json }[];
    tables: TableSizes;
    databaseBytes: number;
    secretKeys: KeyRoleCounts;
    /** source.resume: where the rounds stand (null or absent: the poller has none). */
    resume?: RoundState | null;
    /** source.children: the listing in progress (null: none; absent: no source.children). */
    children?: ChildProgress | null;
  },
): PollerStatus {
  const { state, config } = input;
  const { state: health, warnings, alerts, fresh } = assessHealth(input);
  return {
    name: input.name,
    state: health,
    config_errors: input.configErrors,
    warnings,
    alerts,
    first_seen_at: iso(input.firstSeenAt),
    started_from: iso(state.scopeFrom),
    checkpoint: iso(state.checkpoint),
    lag_seconds:
      state.checkpoint === null
        ? null
        : Math.max(0, Math.round((input.now - state.checkpoint) / 1000)),
    lease: {
      held: state.lease.held,
      epoch: state.lease.epoch,
      started_at: state.lease.held ? iso(state.lease.startedAt) : null,
      expires_at: state.lease.held ? iso(state.lease.expiresAt) : null,
    },
    last_run: input.lastRun ? runView(input.lastRun) : null,
    next_alarm_at: iso(input.alarm),
    next_wakeup: state.wakeup
      ? { at: isoTime(state.wakeup.at), reason: state.wakeup.reason }
      : null,
    consecutive_failures: state.failures,
    upstream_skew_seconds: state.skewMs === null ? null : Math.round(state.skewMs / 100) / 10,
    rate_limited_until:
      state.rateLimitedUntil !== null && state.rateLimitedUntil > input.now
        ? iso(state.rateLimitedUntil)
        : null,
    dead_letters: {
      count: input.deadLetters.count,
      oldest: iso(input.deadLetters.oldest),
      pruned: input.counters.dead_letters_pruned,
      retention: config ? formatDuration(config.dead_letter_retention) : null,
      cap: DEAD_LETTER_CAP,
    },
    counters: input.counters,
    storage: { database_bytes: input.databaseBytes, tables: input.tables },
    paused: state.paused,
    audit: input.audit.map((entry) => ({ ...entry, at: isoTime(entry.at) })),
    at_risk: fresh?.assessment?.risk === 'at_risk',
    freshness: fresh?.view ?? null,
    reconcile: input.reconcile ? reconcileView(input.reconcile) : null,
    auth: input.auth ?? null,
    resume: resumeView(input.resume ?? null, input.now),
    children: childrenView(input.children),
    secrets: {
      count: input.secretKeys.current + input.secretKeys.previous + input.secretKeys.unknown,
      under_current_key: input.secretKeys.current,
      under_previous_key: input.secretKeys.previous,
      under_unknown_key: input.secretKeys.unknown,
    },
  };
}

/** Dead letters wait for an admin: the poller is healthy, but not plain "ok". */
function deadLetterWarning(
  name: string,
  deadLetters: { count: number; oldest: number | null },
  config: PollerConfig | undefined,
): string | null {
  if (deadLetters.count === 0) return null;
  const since =
    deadLetters.oldest === null ? '' : `, the oldest first failed ${isoTime(deadLetters.oldest)}`;
  const pruned = config
    ? ` (each is pruned ${formatDuration(config.dead_letter_retention)} after its first failure)`
    : '';
  return `${deadLetters.count} dead letter${deadLetters.count === 1 ? '' : 's'}${since}: replay or discard them (GET /pollers/${name}/dead-letters)${pruned}`;
}
