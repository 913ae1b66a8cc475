import type { PollerConfig } from '../config/schema.ts';
import { isoTime, isoTimeOrNull } from '../engine/iso-time.ts';
import type { Json, PollerState, RunRecord } from '../engine/ports.ts';
import { skewWarning } from '../engine/skew.ts';
import type { Counters } from './sqlite-store.ts';

/** What `GET /status/:poller` shows. Never a secret, never a record. */
export interface PollerStatus {
  name: string;
  /** ok | running | lagging | failing | paused | misconfigured */
  state: PollerHealth;
  config_errors: string[];
  /** Things that are not failures yet but deserve a look (clock skew). */
  warnings: string[];
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
  /** Updates kept out of the poll loop (R8): how many, and since when. */
  dead_letters: { count: number; oldest: string | null };
  counters: Counters;
  /** Paused by an admin. */
  paused: boolean;
  /** The latest admin actions, newest first. */
  audit: { at: string; action: string; detail: Json }[];
}

export type PollerHealth = 'ok' | 'running' | 'lagging' | 'failing' | 'paused' | 'misconfigured';

export interface RunView {
  epoch: number;
  trigger: string;
  outcome: string;
  started_at: string;
  finished_at: string;
  windows: number;
  pages: number;
  records: number;
  dead_lettered: number;
  error: string | null;
  checkpoint: string | null;
}

const iso = isoTimeOrNull;

/** Shapes a run for JSON. */
export function runView(run: RunRecord): RunView {
  return {
    epoch: run.epoch,
    trigger: run.trigger,
    outcome: run.outcome,
    started_at: isoTime(run.startedAt),
    finished_at: isoTime(run.finishedAt),
    windows: run.windows,
    pages: run.pages,
    records: run.records,
    dead_lettered: run.deadLettered,
    error: run.error,
    checkpoint: iso(run.checkpoint),
  };
}

/**
 * One word for the poller's health: misconfigured (a config error, or an error a retry
 * cannot fix), running, failing (the last run failed), lagging (behind alert_after), ok.
 */
export function healthOf(input: {
  configErrors: string[];
  state: PollerState;
  config: PollerConfig | undefined;
  now: number;
}): PollerHealth {
  const { state, config } = input;
  if (input.configErrors.length > 0 || state.wakeup?.failure === 'misconfigured')
    return 'misconfigured';
  if (state.paused) return 'paused';
  if (state.lease.held) return 'running';
  if (state.failures > 0 || state.wakeup?.reason === 'retry') return 'failing';
  if (config && state.checkpoint !== null && input.now - state.checkpoint > config.alert_after)
    return 'lagging';
  return 'ok';
}

/** Builds a poller's status from its stored state. */
export function buildStatus(input: {
  name: string;
  configErrors: string[];
  config: PollerConfig | undefined;
  state: PollerState;
  lastRun: RunRecord | undefined;
  alarm: number | null;
  counters: Counters;
  deadLetters: { count: number; oldest: number | null };
  audit: { at: number; action: string; detail: Json }[];
  now: number;
}): PollerStatus {
  const { state } = input;
  const skew = skewWarning(state.skewMs, input.config?.lag_allowance ?? 0);
  return {
    name: input.name,
    state: healthOf(input),
    config_errors: input.configErrors,
    warnings: skew === null ? [] : [skew],
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
    dead_letters: { count: input.deadLetters.count, oldest: iso(input.deadLetters.oldest) },
    counters: input.counters,
    paused: state.paused,
    audit: input.audit.map((entry) => ({ ...entry, at: isoTime(entry.at) })),
  };
}
