import { formatDuration } from '../config/duration.ts';
import type { PollerConfig } from '../config/schema.ts';
import { isoTime } from '../engine/iso-time.ts';
import type { PollerState, RunRecord } from '../engine/ports.ts';

/** A poller is at fault after this many failed runs in a row. */
export const FAILURES_BEFORE_ALERT = 3;

/**
 * One word for the poller's health, the first that applies: misconfigured (a config error,
 * or an error a retry cannot fix), paused, running, failing (the last run failed), lagging
 * (C behind alert_after), silent (no run at all within alert_after of the object first
 * seeing its poller), warning (healthy, but see `warnings`), ok.
 */
export type PollerHealth =
  | 'ok'
  | 'warning'
  | 'running'
  | 'lagging'
  | 'silent'
  | 'failing'
  | 'paused'
  | 'misconfigured';

export interface HealthInput {
  configErrors: string[];
  state: PollerState;
  config: PollerConfig | undefined;
  firstSeenAt: number | null;
  lastRun: RunRecord | undefined;
  warnings: string[];
  now: number;
  /** R19: the updates failing, stored and retried, and the first failure of the oldest. */
  retrying?: Retrying | null;
}

/** How many updates are failing (stored, retried by every run) and since when the oldest. */
export interface Retrying {
  count: number;
  oldestSince: number;
}

/** The poller's one-word health (see PollerHealth). */
export function healthOf(input: HealthInput): PollerHealth {
  const { state } = input;
  if (input.configErrors.length > 0 || state.wakeup?.failure === 'misconfigured')
    return 'misconfigured';
  if (state.paused) return 'paused';
  if (state.lease.held) return 'running';
  // A partial run committed its windows (R19): what is left failing is judged by its age.
  if (!partial(input) && (state.failures > 0 || state.wakeup?.reason === 'retry')) return 'failing';
  if (lagging(input) !== null || retryingTooLong(input) !== null) return 'lagging';
  if (silent(input) !== null) return 'silent';
  if (input.warnings.length > 0) return 'warning';
  return 'ok';
}

/**
 * Why /healthz reports this poller (empty: it does not): misconfigured, C behind
 * alert_after, FAILURES_BEFORE_ALERT failed runs in a row, or silent. Nothing for a paused
 * or disabled poller, which is meant to be quiet.
 */
export function alertsOf(input: HealthInput): string[] {
  const { state, config } = input;
  if (state.paused || config?.enabled === false) return [];
  const alerts: string[] = [];
  if (input.configErrors.length > 0) alerts.push(...input.configErrors);
  else if (state.wakeup?.failure === 'misconfigured') {
    alerts.push(`misconfigured: ${input.lastRun?.error ?? 'the last run failed for good'}`);
  }
  const lag = lagging(input);
  if (lag !== null) alerts.push(lag);
  const stuck = retryingTooLong(input);
  if (stuck !== null) alerts.push(stuck);
  if (
    !partial(input) &&
    state.failures >= FAILURES_BEFORE_ALERT &&
    state.wakeup?.failure !== 'misconfigured'
  ) {
    const last = input.lastRun?.error ? `; the last: ${input.lastRun.error}` : '';
    alerts.push(`${state.failures} failed runs in a row${last}`);
  }
  const quiet = silent(input);
  if (quiet !== null) alerts.push(quiet);
  return alerts;
}

/** The last run caught up with updates left failing (R19), not a failed run. */
function partial({ lastRun }: HealthInput): boolean {
  return lastRun?.outcome === 'partial';
}

/**
 * Updates retrying while the oldest is younger than alert_after: a warning (R19). Null when
 * none is, or when it is older (then retryingTooLong alerts).
 */
export function retryingWarning(
  retrying: Retrying | null | undefined,
  config: PollerConfig | undefined,
  now: number,
): string | null {
  if (!retrying || retrying.count === 0) return null;
  if (config && now - retrying.oldestSince > config.alert_after) return null;
  return `${retrying.count} update${retrying.count === 1 ? '' : 's'} retrying, oldest since ${isoTime(retrying.oldestSince)}: the receiver failed them; they are stored and retried first by every run`;
}

/** The oldest failing update has been failing for longer than alert_after: why, or null. */
function retryingTooLong({ retrying, config, now }: HealthInput): string | null {
  if (!retrying || !config || now - retrying.oldestSince <= config.alert_after) return null;
  return `lagging: ${retrying.count} update${retrying.count === 1 ? '' : 's'} retrying, the oldest failing since ${isoTime(retrying.oldestSince)}, more than alert_after (${formatDuration(config.alert_after)}) ago`;
}

/** C is further behind than alert_after: why, or null. */
function lagging({ state, config, now }: HealthInput): string | null {
  if (!config || state.checkpoint === null || now - state.checkpoint <= config.alert_after)
    return null;
  return `lagging: the checkpoint ${isoTime(state.checkpoint)} is ${formatDuration(now - state.checkpoint)} old, more than alert_after (${formatDuration(config.alert_after)})`;
}

/**
 * Never run: no checkpoint (the first run stores one at once) although the object has known
 * its poller for longer than alert_after. Its alarm never fired: the Worker has no cron
 * trigger for the watchdog that arms it, or its schedule is not what was meant.
 */
function silent({ state, config, firstSeenAt, now }: HealthInput): string | null {
  if (!config?.enabled || state.checkpoint !== null || firstSeenAt === null) return null;
  if (now - firstSeenAt <= config.alert_after) return null;
  return `silent: no run since this poller was first seen at ${isoTime(firstSeenAt)}, more than alert_after (${formatDuration(config.alert_after)}) ago: its own alarm never fired. Does the Worker have a cron in [triggers].crons (its watchdog arms every poller's alarm), and is the poller's ${config.cron === undefined ? `every ("${config.every} ms")` : `cron ("${config.cron}")`} what you meant?`;
}
