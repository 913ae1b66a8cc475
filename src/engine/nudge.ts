import type { PollerConfig } from '../config/schema.ts';
import type { NudgeState, PollerState } from './ports.ts';

/**
 * A nudge says "something changed upstream: poll now". It is only a hint: it never moves the
 * checkpoint, and it never starts a run sooner than a trigger could (pause, a booked retry, a
 * rate limit all hold it). It is kept in storage as a pending flag, and the alarm is derived
 * from it like everything else: however many nudges come, one pending flag wants one run.
 */

/** How a nudge was taken. */
export type NudgeReply =
  | {
      /** A run starts at `runAt` (about now, unless min_interval or a backoff holds it). */
      outcome: 'scheduled';
      runAt: number;
    }
  | {
      /** A run is going: one more follows it, at `runAt` at the earliest. */
      outcome: 'after_run';
      runAt: number;
    }
  | {
      /** A nudge was already pending: this one rides on it (no run of its own). */
      outcome: 'coalesced';
      runAt: number | null;
    }
  | { outcome: 'ignored'; reason: 'paused' | 'disabled' };

/** What a nudge does, decided from storage alone. */
export function decideNudge(
  state: PollerState,
  nudges: NudgeState,
  config: PollerConfig,
  now: number,
): { record: 'pending' | 'coalesced' | 'ignored'; reply: NudgeReply } {
  if (!config.enabled)
    return { record: 'ignored', reply: { outcome: 'ignored', reason: 'disabled' } };
  if (state.paused) return { record: 'ignored', reply: { outcome: 'ignored', reason: 'paused' } };
  if (nudges.pending) {
    const runAt = nudgeDueAt(state, nudges, config.min_interval);
    return { record: 'coalesced', reply: { outcome: 'coalesced', runAt } };
  }
  const runAt = nudgeDueAt(state, { ...nudges, pending: true, since: now }, config.min_interval);
  const running = state.lease.held && state.lease.phase === 'running';
  return {
    record: 'pending',
    reply: { outcome: running ? 'after_run' : 'scheduled', runAt: runAt ?? now },
  };
}

/**
 * When a pending nudge may start its run: not before it came, not sooner than min_interval
 * after the last run started (whatever started it), and never before a booked retry or the
 * end of a rate limit (R12). Null when none is pending. While a lease is held the run going
 * comes first: the alarm waits at its lease, and the run's end books this (nextAlarmAt).
 */
export function nudgeDueAt(
  state: PollerState,
  nudges: NudgeState,
  minInterval: number,
): number | null {
  if (!nudges.pending) return null;
  const lastStart = state.lease.startedAt ?? Number.NEGATIVE_INFINITY;
  const retry = state.wakeup?.reason === 'retry' ? state.wakeup.at : Number.NEGATIVE_INFINITY;
  return Math.max(
    0,
    nudges.since ?? 0,
    lastStart + minInterval,
    retry,
    state.rateLimitedUntil ?? Number.NEGATIVE_INFINITY,
  );
}
