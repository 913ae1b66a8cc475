/**
 * The fleet benchmark's figures, and their section of docs/benchmarks.md (between markers, so
 * `npm run bench`, which writes the rest of the file, keeps it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFormatted } from '../sim/write-formatted.ts';
import { REPORT_EVERY_MS, REPORT_GRACE_MS } from '../src/registry/heartbeat.ts';
import type { Recovery } from './lost-alarms.ts';

export interface FleetFigures {
  pollers: number;
  createSeconds: number;
  createdPerSecond: number;
  watchdog: {
    ms: number;
    cpuMs: number;
    /** The share of a core the ticking fleet took meanwhile. */
    backgroundShare: number;
    visited: number;
    subrequests: number;
    /** WatchdogShard invocations the tick's visits went out in (0: all in the cron's own). */
    groups: number;
  };
  /** WATCHDOG_SLICE: overdue runtime pollers per tick at most, and the round robin's floor. */
  slice: number;
  /** WATCHDOG_ROUND: ticks in which every runtime poller is visited once. */
  round: number;
  /** The watchdog's cron, fired every minute while watched, as Cloudflare would. */
  watchdogTicks: { count: number; maxMs: number; overdueVisits: number };
  /** With --lost-alarms: the pollers whose alarms were deleted, and how soon they ran again. */
  lostAlarms: LostAlarmFigures | null;
  observedMinutes: number;
  ticks: number;
  /** Pollers the on-time figures count: all but those made to lose their alarm. */
  watched: number;
  onTime: number;
  onTimeShare: number;
  /** Pollers that never ticked while watched. */
  silent: number;
  /** Pollers every one of whose ticks came within interval + 5 s, to the end of the watch. */
  pollersOnTime: number;
  upstreamRequestsPerTick: number;
  /** Mean wall time of a run. */
  tickMs: number;
  registry: { pollers: number; bytes: number };
  rowsPerTick: number;
  perPollerMonth: {
    doRequests: number;
    rowsWritten: number;
    gbSeconds: number;
    usd: number;
  };
}

export interface LostAlarmFigures extends Recovery {
  percent: number;
  /** The losses fell at random moments of this many minutes from the watch's start. */
  spreadMinutes: number;
}

const START = '<!-- fleet:start -->';
const END = '<!-- fleet:end -->';

/**
 * Writes the fleet's figures into docs/benchmarks.md between markers, so `npm run bench`
 * (which writes the rest of the file, keeping this section) and this one share a document.
 */
function commandLine(f: FleetFigures): string {
  const lost = f.lostAlarms === null ? '' : ` --lost-alarms ${f.lostAlarms.percent}`;
  const slice = f.slice === 200 ? '' : ` --slice ${f.slice}`;
  const round = f.round === 2 ? '' : ` --round ${f.round}`;
  return `--pollers ${f.pollers} --minutes ${Math.round(f.observedMinutes)}${lost}${slice}${round}`;
}

/** The lost-alarm scenario's rows, when it ran. */
function lostAlarmRows(f: FleetFigures): string {
  const lost = f.lostAlarms;
  if (lost === null) return '';
  // The round visits it within WATCHDOG_ROUND ticks of the loss; the overdue queue alone
  // would take REPORT_EVERY + one interval + grace + one tick after its last report.
  const overdueBound = (REPORT_EVERY_MS + REPORT_GRACE_MS) / 60_000 + 2;
  return `| lost alarms: pollers | ${lost.lost} (${lost.percent}%, picked at random, each alarm deleted at a random moment of the watch's first ${lost.spreadMinutes} minutes) |
| lost alarms: time until each ran again | median ${lost.medianMinutes} min, max ${lost.maxMinutes} min (${lost.ranAgain} of ${lost.lost} ran again; by construction within WATCHDOG_ROUND = ${f.round} watchdog ticks of the loss, then the run's own start; the overdue queue alone would take up to ${overdueBound} min) |
| lost alarms: set again by the watchdog | ${lost.repairedByWatchdog} of ${lost.ranAgain} (any other had its alarm set again by a run that was going when it was deleted) |
`;
}

export function writeFleetSection(path: string, figures: FleetFigures): void {
  const f = figures;
  const section = `${START}
## Fleet: ${f.pollers.toLocaleString('en')} runtime pollers in one deployment

Produced by \`npm run bench:fleet -- ${commandLine(f)}\` on ${new Date().toISOString().slice(0, 10)}, in
workerd (Miniflare) on this machine (2 cores): every poller created through
\`PUT /pollers/:name\` with \`every = "60s"\` against an in-process upstream with nothing new,
then left to tick on its own alarm for ${f.observedMinutes} minutes of real time, the watchdog's cron fired
every minute. Ticks are counted by the upstream (each poller names itself in a query
parameter), so reading them wakes no poller.${f.lostAlarms === null ? '' : ' The pollers whose alarms were deleted are left out of the on-time figures.'}

| figure | value |
|---|---:|
| creation through the API | ${f.createdPerSecond.toLocaleString('en')} pollers/s (${f.createSeconds} s for ${f.pollers.toLocaleString('en')}) |
| one watchdog tick: wall time | ${f.watchdog.ms} ms |
| one watchdog tick: CPU | ${f.watchdog.cpuMs} ms (the workerd process's during the tick, less what the ticking fleet took in the 10 s before: ${Math.round(f.watchdog.backgroundShare * 100)}% of a core; the Worker, the registry and the ${f.watchdog.visited} pollers it visits) |
| one watchdog tick: subrequests | ${f.watchdog.subrequests} in the cron's invocation (${f.watchdog.groups > 0 ? `${f.watchdog.groups} WatchdogShard calls of up to 400 visits each` : `${f.watchdog.visited} poller visits`} + 2 registry calls; by construction: ${f.watchdog.visited} visits, every poller once in WATCHDOG_ROUND = ${f.round} ticks) |
| ticks observed | ${f.ticks.toLocaleString('en')} |
| ticks within their interval + 5 s | ${(f.onTimeShare * 100).toFixed(1)}% (${f.onTime.toLocaleString('en')}) |
| pollers whose every tick came within interval + 5 s | ${((f.pollersOnTime / f.watched) * 100).toFixed(1)}% (${f.pollersOnTime.toLocaleString('en')}) |
| pollers that never ticked while watched | ${f.silent.toLocaleString('en')} |
| upstream requests per tick | ${f.upstreamRequestsPerTick} |
| mean wall time of a tick's run | ${f.tickMs} ms |
| rows written per tick, alarm writes included | ${f.rowsPerTick} (a sample of 100 pollers' own counters) |
| registry | ${f.registry.pollers.toLocaleString('en')} rows, ${(f.registry.bytes / 1024 / 1024).toFixed(1)} MB |
| watchdog ticks while watched (one a minute) | ${f.watchdogTicks.count}, the longest ${f.watchdogTicks.maxMs} ms; ${f.watchdogTicks.overdueVisits} visits of overdue pollers in all |
${lostAlarmRows(f)}
Per poller per month at one tick a minute with nothing new, in Cloudflare's units: ${f.perPollerMonth.doRequests.toLocaleString('en')} DO
requests (43,200 ticks, a registry report every ${REPORT_EVERY_MS / 60_000} minutes, a watchdog visit every
${f.round} minutes), ${f.perPollerMonth.rowsWritten.toLocaleString('en')} rows written (a lower bound: an evicted object's counters lose the
idle runs it had not written yet) and ${f.perPollerMonth.gbSeconds} GB-s of duration at the run wall time measured here,
where every Durable Object shares one workerd process on this machine's cores: no dollar figure
is drawn from them. The cost of an idle poller-month is in the cost model
(docs/guarantees.md), from the run's own time in \`npm run bench\`. Subrequests to the
upstream are not billed by Cloudflare. On Cloudflare each Durable Object runs on its own, so
the on-time share here is a lower bound.
${END}
`;
  const existing = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const at = existing.indexOf(START);
  const end = existing.indexOf(END);
  const next =
    at >= 0 && end > at
      ? `${existing.slice(0, at)}${section}${existing.slice(end + END.length + 1)}`
      : `${existing.trimEnd()}\n\n${section}`;
  writeFormatted(path, next);
}
