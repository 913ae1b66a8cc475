/**
 * The fleet benchmark's lost-alarm scenario (`npm run bench:fleet -- --lost-alarms 1`): the
 * platform loses the alarms of some pollers, as it can, and the bench measures how long each
 * took to run again, with only the watchdog's cron (fired every minute) to bring it back.
 */
import { writeFileSync } from 'node:fs';

/**
 * The Worker the bench runs for this scenario: the deployed bundle, unchanged, whose Poller
 * class gains one method, `loseAlarm()`, that deletes its alarm as the platform would lose it.
 * It is written beside the bundle at each run and loaded by the bench alone: the production
 * Worker has no such method, nor any route to one.
 */
const LOSSY_ENTRY = 'dist/bench/lossy.js';

/** The Worker's modules for Miniflare: this entry first, and the bundle it imports. */
export function lossyModules() {
  return {
    modulesRoot: 'dist/bench',
    modules: [
      { type: 'ESModule' as const, path: LOSSY_ENTRY },
      { type: 'ESModule' as const, path: 'dist/bench/index.js' },
    ],
  };
}

export function writeLossyEntry(): void {
  writeFileSync(
    LOSSY_ENTRY,
    `// Written by bench/lost-alarms.ts: the deployed bundle, whose pollers can lose their alarm.
import worker, { Poller as Deployed } from './index.js';
export * from './index.js';
export default worker;
export class Poller extends Deployed {
  async loseAlarm() {
    await this.ctx.storage.deleteAlarm();
  }
}
`,
  );
}

export interface Loss {
  name: string;
  /** When its alarm was deleted (ms). */
  at: number;
}

/**
 * `percent` % of the pollers (at least one), picked at random, each to lose its alarm at a
 * random moment within `spreadMs` of `from`. Spread over a heartbeat period, the losses fall
 * anywhere between two of a poller's reports, as they would in a fleet whose reports are
 * spread out (here every poller was created within a few minutes, so their reports are not).
 */
export function planLosses(
  names: string[],
  percent: number,
  from: number,
  spreadMs: number,
  random: () => number = Math.random,
): Loss[] {
  const count = Math.max(1, Math.round((names.length * percent) / 100));
  const pool = [...names];
  const picked: Loss[] = [];
  for (let i = 0; i < count && pool.length > 0; i += 1) {
    const [name] = pool.splice(Math.floor(random() * pool.length), 1);
    if (name !== undefined) picked.push({ name, at: from + Math.floor(random() * spreadMs) });
  }
  return picked.sort((a, b) => a.at - b.at);
}

/** Deletes each planned alarm when its moment comes (through `lose`); the times it was done. */
export async function loseOnSchedule(
  plan: Loss[],
  lose: (name: string) => Promise<void>,
): Promise<Loss[]> {
  const done: Loss[] = [];
  for (const loss of plan) {
    const wait = loss.at - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    await lose(loss.name);
    done.push({ name: loss.name, at: Date.now() });
  }
  return done;
}

export interface Recovery {
  lost: number;
  /** Ran again, as the upstream saw it: a request from the poller after its loss. */
  ranAgain: number;
  /** Minutes from the loss to that request: median and max. */
  medianMinutes: number;
  maxMinutes: number;
  /** Of those that ran again, how many the watchdog named as repaired. */
  repairedByWatchdog: number;
  /** Never ran again while watched. */
  neverRan: string[];
}

/**
 * For each loss, the time until the poller's first request to the upstream after it (the
 * upstream's own log, `asked`: reading it wakes no poller), and whether a watchdog tick named
 * the poller as repaired. One whose run was going when its alarm was deleted gets it back at
 * that run's end, without the watchdog: counted apart.
 */
export function recoveryOf(
  losses: Loss[],
  asked: Record<string, number[]>,
  repaired: Set<string>,
): Recovery {
  const minutes: number[] = [];
  const neverRan: string[] = [];
  let repairedByWatchdog = 0;
  for (const loss of losses) {
    const next = (asked[loss.name] ?? []).find((at) => at > loss.at);
    if (next === undefined) neverRan.push(loss.name);
    else {
      minutes.push((next - loss.at) / 60_000);
      if (repaired.has(loss.name)) repairedByWatchdog += 1;
    }
  }
  minutes.sort((a, b) => a - b);
  const round = (value: number) => Math.round(value * 10) / 10;
  return {
    lost: losses.length,
    ranAgain: minutes.length,
    medianMinutes: round(
      ((minutes[(minutes.length - 1) >> 1] ?? 0) + (minutes[minutes.length >> 1] ?? 0)) / 2,
    ),
    maxMinutes: round(minutes.at(-1) ?? 0),
    repairedByWatchdog,
    neverRan,
  };
}
