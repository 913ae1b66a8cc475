import { isoTime, isoTimeOrNull } from './iso-time.ts';
import { decideLease, isExpired, type Lease } from './lease.ts';
import type { PollerState, RunContext, RunRecord, TriggerKind } from './ports.ts';
import { runPoll } from './run.ts';
import { recoveredRun, skippedRun } from './run-records.ts';
import { skewWarning } from './skew.ts';

/** The poller's single alarm. */
export interface AlarmPort {
  set(at: number | null): Promise<void>;
  /** The alarm as the platform has it, when it can tell (to see one that was lost). */
  get?(): Promise<number | null>;
}

type LeaseResult =
  | { outcome: 'started'; epoch: number; recovered: boolean }
  | { outcome: 'skipped'; reason: 'lease_held'; lease: Lease };

export type TriggerResult =
  | LeaseResult
  | { outcome: 'skipped'; reason: 'backing_off'; retryAt: number }
  | { outcome: 'skipped'; reason: 'disabled' }
  | { outcome: 'skipped'; reason: 'paused' };

/**
 * The alarm is derived from storage, never remembered: a lease not yet started wants it now,
 * a running lease at its expiry (the crash-recovery ceiling, R5), otherwise the earlier of
 * the next wakeup (retry, continuation) and the poller's own next tick.
 */
export function nextAlarmAt(state: PollerState): number | null {
  if (state.lease.held) {
    return state.lease.phase === 'acquired' ? state.lease.startedAt : state.lease.expiresAt;
  }
  const times = [state.wakeup?.at, state.nextTickAt].filter(
    (at): at is number => at !== undefined && at !== null,
  );
  return times.length === 0 ? null : Math.min(...times);
}

/** Until when a cron tick is held off: a booked retry, or a spent rate-limit quota. */
function holdOffUntil(state: PollerState, now: number): number | null {
  const retry = state.wakeup?.reason === 'retry' ? state.wakeup.at : 0;
  const until = Math.max(retry, state.rateLimitedUntil ?? 0);
  return until > now ? until : null;
}

/** Triggers and alarms of one poller, over injected storage, source, delivery and clock. */
export class PollerEngine {
  constructor(
    private readonly ctx: RunContext,
    private readonly alarm: AlarmPort,
  ) {}

  /**
   * A trigger (cron, manual) takes the lease and asks the alarm to start the run at once,
   * so the caller returns quickly and the run gets an alarm's wall time. A trigger that
   * finds a live lease is skipped and counted, never queued (R4).
   */
  async trigger(kind: TriggerKind): Promise<TriggerResult> {
    const result = this.admit(kind);
    await this.rearm();
    return result;
  }

  /** Decides a trigger, synchronously: skipped (and counted) or granted the lease. */
  private admit(kind: TriggerKind): TriggerResult {
    const now = this.ctx.now();
    const state = this.ctx.store.read();
    if (!this.ctx.config.enabled) {
      this.skip(kind, now, 'the poller is disabled (enabled = false)');
      return { outcome: 'skipped', reason: 'disabled' };
    }
    if (state.paused) {
      this.skip(kind, now, 'the poller is paused (POST /pollers/:name/resume)');
      return { outcome: 'skipped', reason: 'paused' };
    }
    const holdOff = kind === 'cron' && !state.lease.held ? holdOffUntil(state, now) : null;
    if (holdOff !== null) {
      // R12: a retry is booked or the upstream's quota is spent; a cron tick must not hammer.
      this.skip(kind, now, `backing off until ${isoTime(holdOff)}`);
      return { outcome: 'skipped', reason: 'backing_off', retryAt: holdOff };
    }
    const result = this.acquire(kind, state, now);
    if (result.outcome === 'skipped') {
      this.skip(
        kind,
        now,
        `lease held by run ${result.lease.epoch} until ${isoTimeOrNull(result.lease.expiresAt)}`,
      );
    }
    return result;
  }

  /** The alarm: start an acquired run, recover from a dead one, or run a retry or continuation. */
  async onAlarm(): Promise<RunRecord | null> {
    const now = this.ctx.now();
    const state = this.ctx.store.read();
    const { lease, wakeup } = state;
    if (state.paused && lease.held && (lease.phase === 'acquired' || isExpired(lease, now))) {
      // Paused means no run of any kind starts, a recovery included: a lease granted before
      // the pause goes back unused, and an expired one (its run died) is released, its
      // death kept in the history.
      if (lease.phase === 'running') {
        const then = 'the lease is released and no run starts while the poller is paused';
        this.ctx.store.recordRecovery(recoveredRun(lease, now, state.checkpoint, then));
      }
      this.ctx.store.releaseIdle(lease.epoch, now);
      await this.rearm();
      return null;
    }
    if (!this.ctx.config.enabled || (state.paused && !state.lease.held)) {
      // Disabled or paused: no retry, continuation or recovery runs; a trigger after
      // re-enabling recovers a lease left behind. A run already going finishes.
      await this.alarm.set(null);
      return null;
    }
    if (lease.held && !isExpired(lease, now)) {
      if (lease.phase === 'acquired') return this.run(lease);
      await this.rearm(); // the run is alive; its ceiling is still ahead
      return null;
    }
    // The poller's own tick: the next one is booked first, whatever this one comes to.
    const tickDue = state.nextTickAt !== null && state.nextTickAt <= now;
    if (tickDue) this.ctx.store.setNextTick(this.ctx.schedule?.next(now) ?? null);
    if (lease.held || (wakeup && wakeup.at <= now)) {
      const kind: TriggerKind = lease.held ? 'recovery' : (wakeup?.reason ?? 'retry');
      const result = this.acquire(kind, state, now);
      if (result.outcome === 'started') {
        const acquired = this.ctx.store.read().lease;
        return this.run(acquired);
      }
    } else if (tickDue) {
      // Held off like a cron tick while a retry is booked or the quota is spent (R12).
      const result = this.admit('cron');
      if (result.outcome === 'started') return this.run(this.ctx.store.read().lease);
    }
    await this.rearm();
    return null;
  }

  /**
   * Makes sure the poller will wake by itself: books its first tick if it has none, and sets
   * the alarm again if the platform's differs from what storage derives (a lost alarm). An
   * overdue tick stays due, so it runs at once. Says whether anything had to be repaired.
   */
  async ensureScheduled(): Promise<{ repaired: boolean; nextTickAt: number | null }> {
    const before = this.ctx.store.read();
    const { schedule, config } = this.ctx;
    let repaired = false;
    if (schedule && config.enabled && !before.paused && before.nextTickAt === null) {
      this.ctx.store.setNextTick(schedule.next(this.ctx.now()));
      repaired = true;
    }
    const state = this.ctx.store.read();
    // Paused or disabled, nothing wakes it but the lease of a run still going (R5).
    const idle = (state.paused || !config.enabled) && !state.lease.held;
    const wanted = idle ? null : nextAlarmAt(state);
    const current = this.alarm.get ? await this.alarm.get() : undefined;
    if (current !== wanted) {
      await this.alarm.set(wanted);
      repaired ||= current !== undefined;
    }
    return { repaired, nextTickAt: state.nextTickAt };
  }

  /**
   * "Run now" (admin): takes the lease like any trigger and runs in this call, so the caller
   * gets the run's outcome; or says why it was skipped and who holds the lease.
   */
  async runNow(): Promise<TriggerResult | { outcome: 'ran'; run: RunRecord }> {
    // No await between the grant and the start: the alarm cannot start this run as well.
    const reply = this.admit('manual');
    if (reply.outcome !== 'started') {
      await this.rearm();
      return reply;
    }
    const lease = this.ctx.store.read().lease;
    const run = await this.run(lease);
    if (run === null)
      return { outcome: 'skipped', reason: 'lease_held', lease: this.ctx.store.read().lease };
    return { outcome: 'ran', run };
  }

  /** Sets the alarm to what storage says comes next. */
  async rearm(): Promise<void> {
    await this.alarm.set(nextAlarmAt(this.ctx.store.read()));
  }

  private acquire(kind: TriggerKind, state: PollerState, now: number): LeaseResult {
    const decision = decideLease(state.lease, now, this.ctx.config.lease_ttl, kind);
    if (decision.kind === 'skip')
      return { outcome: 'skipped', reason: 'lease_held', lease: decision.holder };
    if (decision.recovered) {
      this.ctx.store.recordRecovery(recoveredRun(decision.recovered, now, state.checkpoint));
    }
    if (!this.ctx.store.acquire(state.lease.epoch, decision.lease)) {
      return { outcome: 'skipped', reason: 'lease_held', lease: this.ctx.store.read().lease };
    }
    return {
      outcome: 'started',
      epoch: decision.lease.epoch,
      recovered: decision.recovered !== null,
    };
  }

  private async run(lease: Lease): Promise<RunRecord | null> {
    // Synchronously, before any await: of two alarm invocations only one may start the run.
    // The lease TTL counts from the run's real start, not from the trigger that granted it.
    const expiresAt = this.ctx.now() + this.ctx.config.lease_ttl;
    if (!this.ctx.store.markRunning(lease.epoch, expiresAt)) {
      await this.rearm();
      return null;
    }
    // R5: while the run is going, the alarm waits at the lease expiry to recover a dead run.
    await this.alarm.set(expiresAt);
    const run = await runPoll(this.ctx, lease.epoch, lease.trigger);
    const state = this.ctx.store.read();
    const warning = skewWarning(state.skewMs, this.ctx.config.lag_allowance);
    this.ctx.log?.({
      event: 'run',
      poller: this.ctx.poller,
      ...run,
      checkpoint: isoTimeOrNull(state.checkpoint),
      ...(warning === null ? {} : { warning }),
    });
    await this.rearm();
    return run;
  }

  private skip(kind: TriggerKind, now: number, reason: string): void {
    const state = this.ctx.store.read();
    this.ctx.store.recordRun(skippedRun(kind, state.lease.epoch, now, state.checkpoint, reason));
  }
}
