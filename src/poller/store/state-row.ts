// The shape of the poller_state row and its checked mapper to the engine's PollerState: owns no table.
import type { PollerState } from '../../engine/ports.ts';
import { FAILURE_KINDS, known, LEASE_PHASES, TRIGGER_KINDS, WAKEUP_REASONS } from './checked.ts';

/**
 * The row of `poller_state` as the store reads it (migrations 1–12), and its checked mapper
 * to the engine's PollerState. One row holds the lease, the checkpoint, what comes next, the
 * counters of history and the kept sizes of every table: a run's bookkeeping is one row write.
 * The write counters are not in it: they are read by the host alone. `idle_run` and
 * `last_report` are, for their owners (History, Presence) read them through the host's row,
 * which shows a deferred write of them (StoreHost.defer) as if it were written.
 */
export type StateRow = {
  checkpoint: number | null;
  epoch: number;
  lease_trigger: string;
  lease_held: number;
  lease_phase: string;
  lease_started_at: number | null;
  lease_expires_at: number | null;
  wakeup_at: number | null;
  wakeup_reason: string | null;
  wakeup_failure: string | null;
  failures: number;
  upstream_skew_ms: number | null;
  rate_limited_until: number | null;
  stall_from: number | null;
  stall_pages: number | null;
  paused: number;
  straggle_ms: number;
  scope_from: number | null;
  next_tick_at: number | null;
  runs: number;
  successes: number;
  failed_runs: number;
  continued_runs: number;
  skipped: number;
  recoveries: number;
  records_delivered: number;
  first_seen_at: number | null;
  ledger_rows: number;
  ledger_bytes: number;
  ledger_boundary: string | null;
  failure_rows: number;
  failure_bytes: number;
  dead_letter_rows: number;
  dead_letter_bytes: number;
  audit_rows: number;
  audit_bytes: number;
  dead_letters_pruned: number;
  dead_letters_pruned_at: number | null;
  idle_run: string | null;
  last_report: string | null;
  written_at: number | null;
};

/** The engine's view of the state row, its kinds checked against what the store writes. */
export function pollerStateOf(row: Readonly<StateRow>): PollerState {
  return {
    checkpoint: row.checkpoint,
    lease: {
      epoch: row.epoch,
      trigger: known(TRIGGER_KINDS, row.lease_trigger, 'poller_state.lease_trigger'),
      held: row.lease_held === 1,
      phase: known(LEASE_PHASES, row.lease_phase, 'poller_state.lease_phase'),
      startedAt: row.lease_started_at,
      expiresAt: row.lease_expires_at,
    },
    wakeup:
      row.wakeup_at === null
        ? null
        : {
            at: row.wakeup_at,
            reason: known(WAKEUP_REASONS, row.wakeup_reason, 'poller_state.wakeup_reason'),
            ...(row.wakeup_failure
              ? {
                  failure: known(FAILURE_KINDS, row.wakeup_failure, 'poller_state.wakeup_failure'),
                }
              : {}),
          },
    failures: row.failures,
    skewMs: row.upstream_skew_ms,
    rateLimitedUntil: row.rate_limited_until,
    stall:
      row.stall_from === null || row.stall_pages === null
        ? null
        : { from: row.stall_from, pages: row.stall_pages },
    paused: row.paused === 1,
    straggleMs: row.straggle_ms,
    scopeFrom: row.scope_from,
    nextTickAt: row.next_tick_at,
  };
}
