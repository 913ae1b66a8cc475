import { isoTime, isoTimeOrNull } from './iso-time.ts';
import { assessLateness, LatenessTally } from './lateness.ts';
import { decideLease, isExpired, type Lease } from './lease.ts';
import { decideNudge, type NudgeReply, nudgeDueAt } from './nudge.ts';
import type { PollerState, RunContext, RunNowKind, RunRecord, TriggerKind } from './ports.ts';
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
 * a running lease at its expiry (the crash-recovery ceiling, R5), otherwise the earliest of
 * the next wakeup (retry, continuation), the poller's own next tick and a pending nudge's
 * run (`nudgeAt`, from engine/nudge.ts).
 */
export function nextAlarmAt(
  state: PollerState,
  nudgeAt: number | null = null,
  now?: number,
): number | null {
  if (state.lease.held) {
    if (state.lease.phase === 'acquired') return state.lease.startedAt;
    // The poller's own next tick, when it comes before the expiry, wakes the object first
    // (finding the run alive, it waits for the expiry): the run's end then finds the alarm
    // where it must be, and leaves it, a write saved on every run.
    const tick = state.nextTickAt;
    const { expiresAt } = state.lease;
    if (now === undefined || tick === null || tick <= now || expiresAt === null) return expiresAt;
    return Math.min(tick, expiresAt);
  }
  const times = [state.wakeup?.at, state.nextTickAt, nudgeAt].filter(
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

  /**
   * Decides a trigger, synchronously: skipped (and counted) or granted the lease; `start`
   * when the caller starts the run in this same turn (see acquire).
   */
  private admit(kind: TriggerKind, start = false, nextTick?: number | null): TriggerResult {
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
    const polite = kind === 'cron' || kind === 'nudge';
    // A run asked for now overrides a booked retry (an operator asked), never the upstream's
    // own "not before" (Retry-After, a spent quota): it would send a request at once.
    const asked = kind === 'manual' || kind === 'startup';
    const limited =
      asked && state.rateLimitedUntil !== null && state.rateLimitedUntil > now
        ? state.rateLimitedUntil
        : null;
    const holdOff = state.lease.held ? null : polite ? holdOffUntil(state, now) : limited;
    if (holdOff !== null) {
      // R12: a retry is booked or the upstream's quota is spent; a cron tick must not hammer.
      this.skip(kind, now, `backing off until ${isoTime(holdOff)}`);
      return { outcome: 'skipped', reason: 'backing_off', retryAt: holdOff };
    }
    const result = this.acquire(kind, state, now, start, nextTick);
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
    // The poller's own tick: the next one is booked, whatever this one comes to; with the
    // lease of the run it starts, in the same write.
    const tickDue = state.nextTickAt !== null && state.nextTickAt <= now;
    const nudgeAt = this.nudgeDue(state);
    const booked = tickDue ? (this.ctx.schedule?.next(now) ?? null) : undefined;
    let result: TriggerResult | null = null;
    if (lease.held || (wakeup && wakeup.at <= now)) {
      const kind: TriggerKind = lease.held ? 'recovery' : (wakeup?.reason ?? 'retry');
      result = this.acquire(kind, state, now, true, booked);
    } else if (tickDue) {
      // Held off like a cron tick while a retry is booked or the quota is spent (R12).
      result = this.admit('cron', true, booked);
    } else if (nudgeAt !== null && nudgeAt <= now) {
      result = this.admit('nudge', true);
    }
    if (result?.outcome === 'started') return this.run(this.ctx.store.read().lease);
    if (booked !== undefined) this.ctx.store.setNextTick(booked);
    await this.rearm();
    return null;
  }

  /**
   * A nudge: "something changed upstream". Wants one run, through the alarm: at once when
   * none is going (min_interval after the last run's start at the earliest), after the run
   * that is going otherwise. Nudges coalesce into one pending flag, so a storm costs at most
   * a run now and one after it. Never past a pause, a booked retry or a rate limit, and never
   * a move of the checkpoint by itself.
   */
  async nudge(): Promise<NudgeReply> {
    const freshness = this.ctx.freshness;
    if (!freshness) return { outcome: 'ignored', reason: 'disabled' };
    const now = this.ctx.now();
    const decision = decideNudge(this.ctx.store.read(), freshness.nudges(), this.ctx.config, now);
    freshness.recordNudge(decision.record, now);
    if (decision.record === 'pending') {
      // One line for a nudge that wants a run; those folded into it (a storm) write none.
      const { reply } = decision;
      const runAt = 'runAt' in reply ? { run_at: isoTimeOrNull(reply.runAt) } : {};
      this.ctx.log?.({ event: 'nudge', poller: this.ctx.poller, outcome: reply.outcome, ...runAt });
      await this.rearm();
    }
    return decision.reply;
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
    const wanted = idle ? null : nextAlarmAt(state, this.nudgeDue(state), this.ctx.now());
    const current = this.alarm.get ? await this.alarm.get() : undefined;
    if (current !== wanted) {
      await this.alarm.set(wanted);
      repaired ||= current !== undefined;
    }
    return { repaired, nextTickAt: state.nextTickAt };
  }

  /**
   * "Run now" (admin): takes the lease like any trigger and runs in this call, so the caller
   * gets the run's outcome; or says why it was skipped and who holds the lease. `kind` is
   * the run's trigger in the history: `manual`, or `startup` (npm start's first run).
   */
  async runNow(
    kind: RunNowKind = 'manual',
  ): Promise<TriggerResult | { outcome: 'ran'; run: RunRecord }> {
    // No await between the grant and the start: the alarm cannot start this run as well.
    const reply = this.admit(kind, true);
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
    const state = this.ctx.store.read();
    await this.alarm.set(nextAlarmAt(state, this.nudgeDue(state), this.ctx.now()));
  }

  /** When a pending nudge wants its run, or null. */
  private nudgeDue(state: PollerState): number | null {
    const freshness = this.ctx.freshness;
    if (!freshness) return null;
    return nudgeDueAt(state, freshness.nudges(), this.ctx.config.min_interval);
  }

  /**
   * Takes the lease. With `start`, the caller starts the run in this same turn, with no
   * await between (the alarm, a manual run): the lease is written as running at once, and
   * with `nextTick` the poller's next tick is booked in that same write.
   */
  private acquire(
    kind: TriggerKind,
    state: PollerState,
    now: number,
    start = false,
    nextTick?: number | null,
  ): LeaseResult {
    const decision = decideLease(state.lease, now, this.ctx.config.lease_ttl, kind);
    if (decision.kind === 'skip')
      return { outcome: 'skipped', reason: 'lease_held', lease: decision.holder };
    if (decision.recovered) {
      this.ctx.store.recordRecovery(recoveredRun(decision.recovered, now, state.checkpoint));
    }
    const lease: Lease = start ? { ...decision.lease, phase: 'running' } : decision.lease;
    if (!this.ctx.store.acquire(state.lease.epoch, lease, nextTick)) {
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
    // A lease granted running was granted in this turn: the run starts now, under it.
    const now = this.ctx.now();
    const granted = lease.phase === 'running' ? lease.expiresAt : null;
    const expiresAt = granted ?? now + this.ctx.config.lease_ttl;
    if (granted === null && !this.ctx.store.markRunning(lease.epoch, expiresAt)) {
      await this.rearm();
      return null;
    }
    // This run starts after every nudge received so far: it is the run they asked for.
    this.ctx.freshness?.takeNudge();
    // R5: while the run is going, the alarm waits at the lease expiry to recover a dead run
    // (or at the poller's next tick, if sooner: see nextAlarmAt).
    await this.alarm.set(nextAlarmAt(this.ctx.store.read(), null, now));
    // With no lag_allowance and no overlap nothing is read twice: nothing late can be seen.
    const { lag_allowance, overlap } = this.ctx.config;
    const tally =
      this.ctx.freshness && lag_allowance + overlap > 0
        ? new LatenessTally(this.ctx, this.ctx.freshness.coverage())
        : undefined;
    // One deadline timer for the run's requests, not one per request (Source.hold).
    const releases = [this.ctx.source.hold?.(), this.ctx.deliverer.hold?.()];
    let run: RunRecord;
    try {
      run = await runPoll(
        tally ? { ...this.ctx, lateness: tally } : this.ctx,
        lease.epoch,
        lease.trigger,
      );
    } finally {
      for (const release of releases) release?.();
    }
    const state = this.ctx.store.read();
    const warning = skewWarning(state.skewMs, this.ctx.config.lag_allowance);
    const lateness = this.keepLateness(run, tally);
    const sampled = this.ctx.idleLog?.admit(run, this.ctx.now()) ?? { log: true, folded: 0 };
    if (sampled.log || warning !== null || Object.keys(lateness).length > 0) {
      this.ctx.log?.({
        event: 'run',
        poller: this.ctx.poller,
        ...run,
        checkpoint: isoTimeOrNull(state.checkpoint),
        ...(sampled.folded > 0 ? { idle_runs_not_logged: sampled.folded } : {}),
        ...(warning === null ? {} : { warning }),
        ...lateness,
      });
    }
    await this.rearm();
    return run;
  }

  /**
   * Keeps what the run measured of the upstream's lag (not for a fenced run: it committed
   * nothing, and the run that took over measures the same records). When it saw late
   * records, returns the verdict for the run's log line, and logs a near miss on its own.
   */
  private keepLateness(run: RunRecord, tally: LatenessTally | undefined): Record<string, unknown> {
    const freshness = this.ctx.freshness;
    const measured = tally?.measurement();
    if (!freshness || !measured || run.outcome === 'fenced') return {};
    const now = this.ctx.now();
    freshness.recordLateness(now, measured);
    if (measured.histogram.count === 0) return {};
    const verdict = assessLateness(freshness.lateness(now), this.ctx.config);
    if (measured.nearMiss !== null) {
      const { id, version, latenessMs } = measured.nearMiss;
      this.ctx.log?.({
        event: 'near_miss',
        level: 'warn',
        poller: this.ctx.poller,
        count: measured.histogram.nearMisses,
        id,
        version,
        lateness_seconds: latenessMs / 1000,
        message: verdict.warning,
      });
    }
    return {
      late_records: measured.histogram.count,
      lateness_max_seconds: measured.histogram.maxMs / 1000,
      ...(verdict.warning === null
        ? {}
        : { lateness_risk: verdict.risk, lateness_warning: verdict.warning }),
    };
  }

  private skip(kind: TriggerKind, now: number, reason: string): void {
    const state = this.ctx.store.read();
    this.ctx.store.recordRun(skippedRun(kind, state.lease.epoch, now, state.checkpoint, reason));
  }
}
