import { isoTime } from './iso-time.ts';
import type { Lease } from './lease.ts';
import type { RunRecord, TriggerKind } from './ports.ts';

/** History for a trigger that did not run: it found the lease held, or a retry booked. */
export function skippedRun(
  trigger: TriggerKind,
  epoch: number,
  now: number,
  checkpoint: number | null,
  reason: string,
): RunRecord {
  return idle(trigger, epoch, 'skipped', now, now, checkpoint, reason);
}

/** History for a run that died holding the lease, written when its lease is taken over. */
export function recoveredRun(
  dead: Lease,
  now: number,
  checkpoint: number | null,
  then = 'recovered',
): RunRecord {
  const expired = isoTime(dead.expiresAt ?? now);
  const error = `run ${dead.epoch} did not finish before its lease expired at ${expired}; ${then}`;
  return idle(dead.trigger, dead.epoch, 'recovered', dead.startedAt ?? now, now, checkpoint, error);
}

function idle(
  trigger: TriggerKind,
  epoch: number,
  outcome: 'skipped' | 'recovered',
  startedAt: number,
  finishedAt: number,
  checkpoint: number | null,
  error: string,
): RunRecord {
  return {
    epoch,
    trigger,
    outcome,
    startedAt,
    finishedAt,
    windows: 0,
    pages: 0,
    records: 0,
    deadLettered: 0,
    error,
    checkpoint,
  };
}
