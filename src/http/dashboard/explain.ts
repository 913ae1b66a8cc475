import { formatDuration } from '../../config/duration.ts';
import type { PollerStatus, RunView } from '../../poller/status.ts';
import { plural, relative, seconds, when } from './format.ts';

/** What the dashboard knows of a poller's config beyond its status (none of it secret). */
export interface PollerFacts {
  /** static: declared in POLLERS (wrangler.toml); runtime: created with PUT /pollers/:name. */
  kind: 'static' | 'runtime';
  cron: string | null;
  /** `every` in ms, for a poller that ticks at an interval instead of a cron. */
  everyMs: number | null;
  enabled: boolean;
  /** alert_after in ms; null when the config is invalid. */
  alertAfterMs: number | null;
}

/** When the poller ticks by itself: its cron, or "every 5m". */
export function scheduleText(facts: PollerFacts): string {
  if (facts.cron !== null) return facts.cron;
  return facts.everyMs === null ? 'no cron' : `every ${formatDuration(facts.everyMs)}`;
}

/** Where the poller's config is changed, in words. */
const configHome = (facts: PollerFacts) => (facts.kind === 'static' ? 'POLLERS' : 'its config');

/**
 * The newest run that did something. A skipped trigger is not a run: showing its reason as
 * the last run's error would say "the poller is paused" long after it was resumed.
 */
export function lastRealRun(runs: RunView[]): RunView | null {
  return runs.find((run) => run.outcome !== 'skipped') ?? null;
}

/** The latest audit entry of an action, for "paused at … because …". */
function latest(status: PollerStatus, action: string) {
  return status.audit.find((entry) => entry.action === action);
}

/** The one sentence that says why the poller is in its state. */
function headline(status: PollerStatus, facts: PollerFacts, runs: RunView[], now: number): string {
  const lag = status.lag_seconds;
  switch (status.state) {
    case 'ok':
      if (!facts.enabled)
        return `Disabled in ${configHome(facts)} (enabled = false): no trigger starts a run.`;
      if (lag === null) return 'Healthy: no run has stored a checkpoint yet.';
      return `Healthy: the checkpoint is ${seconds(lag)} behind${facts.alertAfterMs === null ? '' : `, alert_after is ${formatDuration(facts.alertAfterMs)}`}.`;
    case 'warning':
      return 'Healthy, but something waits for a look:';
    case 'running':
      return `Running: run ${status.lease.epoch} holds the lease since ${when(status.lease.started_at)}.`;
    case 'failing': {
      const error = lastRealRun(runs)?.error;
      const retry =
        status.next_wakeup?.reason === 'retry'
          ? `; a retry is booked ${relative(status.next_wakeup.at, now)}`
          : '';
      return `Failing: ${plural(status.consecutive_failures, 'failed run')} in a row${retry}.${error ? ` The last error: ${error}` : ''}`;
    }
    case 'lagging':
      return 'Lagging: the checkpoint is further behind than alert_after.';
    case 'silent':
      return 'Silent: no run has happened since this poller was first seen.';
    case 'paused': {
      const paused = latest(status, 'poller.paused');
      const detail = paused?.detail as { reason?: unknown } | undefined;
      const reason =
        typeof detail?.reason === 'string' && detail.reason ? `: “${detail.reason}”` : '';
      return `Paused by an admin${paused ? ` at ${when(paused.at)}` : ''}${reason}. No run starts until Resume.`;
    }
    case 'misconfigured':
      if (status.config_errors.length === 0)
        return 'Misconfigured: the last run failed in a way a retry cannot fix.';
      return facts.kind === 'static'
        ? 'Misconfigured: no run starts until POLLERS is fixed and deployed.'
        : `Misconfigured: no run starts until its config is fixed (PUT /pollers/${status.name}) or the secrets it names are set.`;
  }
}

/** Why the poller is in its state: a headline, then each error, alert and warning once. */
export function whyLines(
  status: PollerStatus,
  facts: PollerFacts,
  runs: RunView[],
  now: number,
): string[] {
  return [
    ...new Set([
      headline(status, facts, runs, now),
      ...status.config_errors,
      ...status.alerts,
      ...status.warnings,
    ]),
  ];
}

/** When the poller wakes next, and why (or why it will not). */
export function nextWakeup(
  status: PollerStatus,
  facts: PollerFacts,
): { at: string | null; why: string } {
  if (status.paused) return { at: null, why: 'nothing while paused' };
  if (status.config_errors.length > 0)
    return { at: null, why: 'nothing until the config is fixed' };
  if (status.lease.held) {
    return {
      at: status.lease.expires_at,
      why: `the lease of run ${status.lease.epoch} expires: if the run died, this recovers it`,
    };
  }
  if (status.next_wakeup?.reason === 'retry') {
    return {
      at: status.next_wakeup.at,
      why: `a retry, backing off after ${plural(status.consecutive_failures, 'failed run')}`,
    };
  }
  if (status.next_wakeup?.reason === 'continuation') {
    return {
      at: status.next_wakeup.at,
      why: 'the run continues its backlog in a fresh invocation',
    };
  }
  if (!facts.enabled) return { at: null, why: `nothing: disabled in ${configHome(facts)}` };
  const schedule = scheduleText(facts);
  if (status.rate_limited_until !== null) {
    return {
      at: status.rate_limited_until,
      why: `the upstream's rate limit ends; ticks (${schedule}) are held off until then`,
    };
  }
  // Every poller books its own next tick on its alarm.
  return {
    at: status.next_alarm_at,
    why: facts.cron === null ? `the next tick (${schedule})` : `the next cron tick (${schedule})`,
  };
}

/** The lease in words. */
export function leaseText(status: PollerStatus, now: number): string {
  const { lease } = status;
  if (!lease.held) return `free (${lease.epoch === 0 ? 'no run yet' : `epoch ${lease.epoch}`})`;
  return `held by run ${lease.epoch} since ${when(lease.started_at)}, until ${when(lease.expires_at)} (${relative(lease.expires_at, now)})`;
}

/** The upstream's clock against ours. */
export function skewText(skew: number | null): string {
  if (skew === null) return 'not measured yet';
  if (skew === 0) return 'in step with ours (±1 s)';
  return `${Math.abs(skew)} s ${skew > 0 ? 'ahead of' : 'behind'} ours (±1 s)`;
}
