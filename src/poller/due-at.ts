import { nextAlarmAt } from '../engine/poller.ts';
import type { PollerState, Schedule } from '../engine/ports.ts';
import { REPORT_EVERY_MS, REPORT_GRACE_MS } from '../registry/heartbeat.ts';

/**
 * When the registry should have heard from this poller again, sent with each report: "if I am
 * silent past this, my alarm is lost" (the watchdog visits a runtime poller past it first).
 * Null when nothing wakes the poller by itself (paused, disabled, nothing booked): silence is
 * then expected, and it is never overdue.
 *
 * The poller reports again at its first run once REPORT_EVERY has passed (a heartbeat, see
 * reportToRegistry), so that is its next run, or its first own tick from REPORT_EVERY on,
 * whichever is later; plus a grace for the alarm's delivery and the run before the report.
 */
export function dueAt(
  state: PollerState,
  poller: { enabled: boolean; schedule?: Schedule | undefined },
  now: number,
): number | null {
  if (!poller.enabled || state.paused) return null;
  // Its alarm, derived as the engine derives it: the next tick, a booked retry or continuation,
  // or the lease's expiry while a run is going.
  const nextRun = nextAlarmAt(state, null, now);
  if (nextRun === null) return null;
  const heartbeat = now + REPORT_EVERY_MS;
  // `next` is strictly after: the tick at REPORT_EVERY itself already reports.
  const beatsAt = poller.schedule?.next(heartbeat - 1) ?? heartbeat;
  return Math.max(nextRun, beatsAt) + REPORT_GRACE_MS;
}
