import type { PollerState, RunRecord } from '../engine/ports.ts';
import type { Counters } from './sqlite-store.ts';

/** What `GET /status/:poller` shows. Never a secret, never a record. */
export interface PollerStatus {
  name: string;
  config_errors: string[];
  checkpoint: string | null;
  lag_seconds: number | null;
  lease: { held: boolean; epoch: number; started_at: string | null; expires_at: string | null };
  last_run: RunView | null;
  next_alarm_at: string | null;
  next_wakeup: { at: string; reason: string } | null;
  consecutive_failures: number;
  counters: Counters;
}

export interface RunView {
  epoch: number;
  trigger: string;
  outcome: string;
  started_at: string;
  finished_at: string;
  windows: number;
  pages: number;
  records: number;
  error: string | null;
  checkpoint: string | null;
}

const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? null : new Date(ms).toISOString();

/** Shapes a run for JSON. */
export function runView(run: RunRecord): RunView {
  return {
    epoch: run.epoch,
    trigger: run.trigger,
    outcome: run.outcome,
    started_at: new Date(run.startedAt).toISOString(),
    finished_at: new Date(run.finishedAt).toISOString(),
    windows: run.windows,
    pages: run.pages,
    records: run.records,
    error: run.error,
    checkpoint: iso(run.checkpoint),
  };
}

/** Builds a poller's status from its stored state. */
export function buildStatus(input: {
  name: string;
  configErrors: string[];
  state: PollerState;
  lastRun: RunRecord | undefined;
  alarm: number | null;
  counters: Counters;
  now: number;
}): PollerStatus {
  const { state } = input;
  return {
    name: input.name,
    config_errors: input.configErrors,
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
      ? { at: new Date(state.wakeup.at).toISOString(), reason: state.wakeup.reason }
      : null,
    consecutive_failures: state.failures,
    counters: input.counters,
  };
}
