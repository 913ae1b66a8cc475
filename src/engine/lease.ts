import type { TriggerKind } from './ports.ts';

/** The lease row: at most one run per poller (R4), with an epoch for fencing (R6). */
export interface Lease {
  epoch: number;
  /** What started the run holding (or last holding) the lease. */
  trigger: TriggerKind;
  held: boolean;
  /** "acquired": granted, run not started yet; "running": the run loop owns it. */
  phase: 'acquired' | 'running';
  startedAt: number | null;
  expiresAt: number | null;
}

export const NO_LEASE: Lease = {
  epoch: 0,
  trigger: 'cron',
  held: false,
  phase: 'acquired',
  startedAt: null,
  expiresAt: null,
};

export type LeaseDecision =
  | { kind: 'acquire'; lease: Lease; recovered: Lease | null }
  | { kind: 'skip'; holder: Lease };

/** True when a held lease has outlived its TTL: its run died (deploy, eviction, limit). */
export function isExpired(lease: Lease, now: number): boolean {
  return lease.held && lease.expiresAt !== null && now >= lease.expiresAt;
}

/**
 * R4/R5: a trigger acquires the lease unless a live one is held. An expired lease is taken
 * over (a recovery) with the next epoch, so the dead run's commits are fenced off.
 */
export function decideLease(
  current: Lease,
  now: number,
  ttl: number,
  trigger: TriggerKind,
): LeaseDecision {
  if (current.held && !isExpired(current, now)) return { kind: 'skip', holder: current };
  return {
    kind: 'acquire',
    lease: {
      epoch: current.epoch + 1,
      trigger,
      held: true,
      phase: 'acquired',
      startedAt: now,
      expiresAt: now + ttl,
    },
    recovered: current.held ? current : null,
  };
}

/** R6: a run may commit only while the stored lease is still its own. */
export function holdsLease(stored: Lease, epoch: number): boolean {
  return stored.held && stored.epoch === epoch;
}
