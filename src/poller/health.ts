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
}

/** The poller's one-word health (see PollerHealth). */
export function healthOf(input: HealthInput): PollerHealth {
  const { state } = input;
  if (input.configErrors.length > 0 || state.wakeup?.failure === 'misconfigured')
    return 'misconfigured';
  if (state.paused) return 'paused';
  if (state.lease.held) return 'running';
  if (state.failures > 0 || state.wakeup?.reason === 'retry') return 'failing';
  if (lagging(input) !== null) return 'lagging';
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
  if (state.failures >= FAILURES_BEFORE_ALERT && state.wakeup?.failure !== 'misconfigured') {
    const last = input.lastRun?.error ? `; the last: ${input.lastRun.error}` : '';
    alerts.push(`${state.failures} failed runs in a row${last}`);
  }
  const quiet = silent(input);
  if (quiet !== null) alerts.push(quiet);
  return alerts;
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
