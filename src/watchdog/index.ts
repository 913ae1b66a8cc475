import { staticPollers } from '../catalog.ts';
import { deletePoller, syncStatic } from '../fleet/lifecycle.ts';
import { registryOf, type WatchdogEntry } from '../registry/registry.ts';
import { DEFAULT_ROUND, DEFAULT_SLICE, SHARD_VISITS } from './limits.ts';
import { addFindings, repush, type VisitFindings, visitAll } from './visit.ts';

export { DEFAULT_ROUND, DEFAULT_SLICE, SHARD_VISITS };

/** A create or delete still half-way after this long was cut short by a crash. */
const STUCK_MS = 60_000;

/** Where the groups of a large share are visited: this Worker's WatchdogShard (ctx.exports). */
export interface Shards {
  visit(entries: WatchdogEntry[]): Promise<VisitFindings>;
}

export interface WatchdogReport extends VisitFindings {
  /** Of those visited, runtime pollers the registry had not heard from in time. */
  overdue: number;
  /** Groups of visits sent to WatchdogShard invocations. */
  shards: number;
  /** Pollers the registry lists. */
  total: number;
}

/**
 * The Cron Trigger's only job now that every poller schedules itself: repair. Every static
 * poller (POLLERS fits in 5 KB: a few dozen at most), up to WATCHDOG_SLICE runtime pollers
 * past the due time their last report gave (most overdue first), and the round robin's next
 * runtime pollers (every active one once in WATCHDOG_ROUND ticks) get their alarm checked (a
 * lost one is set again, an overdue tick runs at once), and creates or deletes a crash left
 * half-way are finished. A share larger than WATCHDOG_GROUP (SHARD_VISITS) is visited in
 * groups, each in a WatchdogShard invocation of its own, so a lost alarm is found within WATCHDOG_ROUND ticks
 * at any fleet size; without `shards` (a test calling this directly), all in this one.
 */
export async function watchdog(
  env: Env,
  now = Date.now(),
  shards: Shards | null = null,
): Promise<WatchdogReport> {
  const slice = positive(env.WATCHDOG_SLICE, DEFAULT_SLICE);
  const round = positive(env.WATCHDOG_ROUND, DEFAULT_ROUND);
  const groupSize = positive(env.WATCHDOG_GROUP, SHARD_VISITS);
  await syncStatic(env);
  // Without shards (a test calling this directly, or a runtime without ctx.exports), the
  // round visits only what one invocation can: the cursor moves no further than it visits.
  const most = shards === null ? groupSize : Number.POSITIVE_INFINITY;
  const share = await registryOf(env).watchdogSlice(slice, STUCK_MS, now, round, most);
  const { stuck, overdue, slice: runtime } = share;
  const report: WatchdogReport = {
    visited: 0,
    repaired: [],
    misconfigured: [],
    failed: [],
    overdue: overdue.length,
    shards: 0,
    total: share.total,
  };
  const statics = staticPollers(env).pollers.map((entry) => ({ name: entry.name, entry: null }));
  const own = [...statics, ...overdue.map((entry) => ({ name: entry.name, entry }))];
  const groups = shards !== null && runtime.length > groupSize ? chunks(runtime, groupSize) : [];
  if (groups.length === 0) own.push(...runtime.map((entry) => ({ name: entry.name, entry })));
  report.shards = groups.length;
  await Promise.allSettled([
    visitAll(env, own).then((found) => addFindings(report, found)),
    ...groups.map((group) => visitGroup(env, shards, group, report, now)),
    ...stuck.map((entry) => finishStuck(env, entry, report)),
  ]);
  const found = report.repaired.length + report.misconfigured.length + report.failed.length;
  if (found + report.overdue > 0) {
    console.log(JSON.stringify({ event: 'watchdog', ...report }));
  }
  return report;
}

/**
 * One group in its own invocation. If that call fails, its pollers are made overdue, so the
 * next tick's overdue queue visits them instead of the next round.
 */
async function visitGroup(
  env: Env,
  shards: Shards | null,
  group: WatchdogEntry[],
  report: WatchdogReport,
  now: number,
): Promise<void> {
  try {
    if (shards === null) throw new Error('no WatchdogShard');
    addFindings(report, await shards.visit(group));
  } catch (error) {
    const names = group.map((entry) => entry.name);
    report.failed.push(...names);
    console.log(
      JSON.stringify({
        event: 'watchdog_shard_failed',
        pollers: names.length,
        error: String(error),
      }),
    );
    await registryOf(env).dueNow(names, now);
  }
}

function chunks(entries: readonly WatchdogEntry[], size: number): WatchdogEntry[][] {
  const groups: WatchdogEntry[][] = [];
  for (let start = 0; start < entries.length; start += size) {
    groups.push(entries.slice(start, start + size));
  }
  return groups;
}

/** A var that must be a positive whole number, or its default. */
function positive(value: string | undefined, fallback: number): number {
  const parsed = Math.floor(Number(value ?? fallback));
  return Number.isFinite(parsed) && parsed >= 1 ? parsed : fallback;
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
