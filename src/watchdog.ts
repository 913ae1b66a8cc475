import { pollerObject, staticPollers } from './catalog.ts';
import { deletePoller, pushConfig, syncStatic } from './fleet/lifecycle.ts';
import { registryOf, type WatchdogEntry } from './registry/registry.ts';

/** Runtime pollers visited per tick unless WATCHDOG_SLICE says otherwise. */
export const DEFAULT_SLICE = 200;

/** A create or delete still half-way after this long was cut short by a crash. */
const STUCK_MS = 60_000;

export interface WatchdogReport {
  /** Pollers visited: every static one, the overdue runtime ones, and a slice of the rest. */
  visited: number;
  /** Of those, runtime pollers visited because the registry had not heard from them in time. */
  overdue: number;
  /** Alarms set again, first ticks booked, configs pushed, deletions finished. */
  repaired: string[];
  misconfigured: string[];
  failed: string[];
  /** Pollers the registry lists. */
  total: number;
}

/**
 * The Cron Trigger's only job now that every poller schedules itself: a bounded amount of
 * repair per tick. Every static poller (POLLERS fits in 5 KB: a few dozen at most), up to
 * WATCHDOG_SLICE runtime pollers past the due time their last report gave (most overdue
 * first), and the next WATCHDOG_SLICE runtime pollers in name order get their alarm checked
 * (a lost one is set again, an overdue tick runs at once), and creates or deletes a crash left
 * half-way are finished. A poller whose alarm was lost stops reporting, so it is overdue from
 * its first own tick REPORT_EVERY after its last report, plus REPORT_GRACE (poller/due-at.ts):
 * its alarm is set again one tick later, at any fleet size, where the round robin alone takes
 * ceil(runtime pollers / WATCHDOG_SLICE) ticks. The round robin still reaches the rest (a
 * poller that never reported a due time, a config push a crash cut short).
 */
export async function watchdog(env: Env, now = Date.now()): Promise<WatchdogReport> {
  const slice = Math.max(1, Number(env.WATCHDOG_SLICE ?? DEFAULT_SLICE) || DEFAULT_SLICE);
  const report: WatchdogReport = {
    visited: 0,
    overdue: 0,
    repaired: [],
    misconfigured: [],
    failed: [],
    total: 0,
  };
  await syncStatic(env);
  const registry = registryOf(env);
  const share = await registry.watchdogSlice(slice, STUCK_MS, now);
  const { stuck, overdue, slice: runtime } = share;
  report.total = share.total;
  report.overdue = overdue.length;
  const statics = staticPollers(env).pollers.map((entry) => entry.name);
  // Settled one by one: an object that cannot be reached must not hide the others.
  await Promise.allSettled([
    ...statics.map((name) => visit(env, name, null, report)),
    ...overdue.map((entry) => visit(env, entry.name, entry, report)),
    ...runtime.map((entry) => visit(env, entry.name, entry, report)),
    ...stuck.map((entry) => finishStuck(env, entry, report)),
  ]);
  const found = report.repaired.length + report.misconfigured.length + report.failed.length;
  if (found + report.overdue > 0) {
    console.log(JSON.stringify({ event: 'watchdog', ...report }));
  }
  return report;
}

async function visit(
  env: Env,
  name: string,
  entry: WatchdogEntry | null,
  report: WatchdogReport,
): Promise<void> {
  report.visited += 1;
  try {
    const seen = await pollerObject(env, name).ensureScheduled(entry);
    if (!seen.ok && seen.stale) {
      // The object does not run what the registry issued (a push a crash cut short): it gets
      // the config as the registry has it now, read at this moment, so a name deleted since
      // the slice was read is not pushed back (and its object refuses it anyway, R14).
      if (await repush(env, name)) report.repaired.push(name);
      return;
    }
    if (!seen.ok) report.misconfigured.push(name);
    else if (seen.repaired) report.repaired.push(name);
  } catch (error) {
    report.failed.push(name);
    console.log(JSON.stringify({ event: 'watchdog_failed', poller: name, error: String(error) }));
  }
}

/** Pushes the config the registry issues now; false when it issues none (deleted meanwhile). */
async function repush(env: Env, name: string): Promise<boolean> {
  const issued = await registryOf(env).issued(name);
  if (issued === null) return false;
  return (await pushConfig(env, name, issued)).outcome === 'configured';
}

/** Finishes what a crash interrupted: a config not yet in its object, or an erase. */
async function finishStuck(env: Env, entry: WatchdogEntry, report: WatchdogReport): Promise<void> {
  try {
    if (entry.phase === 'deleting') {
      await deletePoller(env, entry.name, { finished_by: 'watchdog' });
      report.repaired.push(entry.name);
    } else if (entry.phase === 'configuring' && (await repush(env, entry.name))) {
      report.repaired.push(entry.name);
    }
  } catch (error) {
    report.failed.push(entry.name);
    console.log(
      JSON.stringify({ event: 'watchdog_failed', poller: entry.name, error: String(error) }),
    );
  }
}
