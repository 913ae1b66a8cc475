import { retryAt } from './backoff.ts';
import { isoTime } from './iso-time.ts';
import type { Stop, WindowResult } from './poll-window.ts';
import type { Stall, Wakeup } from './ports.ts';
import { partialCheckpoint } from './sorted-progress.ts';
import { hasBacklog, nextCheckpoint, type Window } from './window.ts';

/** Everything the decision after a window depends on: no storage, no clock of its own. */
export interface AfterWindowInput {
  result: Exclude<WindowResult, { kind: 'fenced' }>;
  window: Window;
  /** C when the window started. */
  checkpoint: number;
  /** The window's start time (R1). */
  T: number;
  lagAllowance: number;
  /** The stored state's consecutive failures and the last stall seen. */
  failures: number;
  stall: Stall | null;
  /** What this run did before and in this window. */
  tally: { windows: number; records: number; released: number };
  now: number;
  random: () => number;
  /** What is left of the run: time, and subrequests against what this window cost. */
  outOfTime: boolean;
  budgetRemaining: number;
  windowCost: number;
  /** The config's hints for the advice of a window too big for one run. */
  sorted: boolean;
  bounded: boolean;
}

/**
 * What comes after a window, as a value:
 * - `failed`: keep what it handled (C up to `keep`), retry at `wakeup` (R2, R12);
 * - `incomplete`: a budget or rate limit stopped it: keep, and continue at `wakeup` (R3, R7);
 * - `stall`: it stopped again no further into the window than last time: a window too big
 *   for one run, reported as a misconfiguration and retried slowly;
 * - `done`: it completed and the run has caught up: commit `checkpoint` with the finish;
 * - `budget`: it completed, but the next window would not fit: continue in a fresh invocation;
 * - `next`: it completed: commit `checkpoint` and poll the next window.
 */
export type AfterWindow =
  | { kind: 'failed'; keep: number; failures: number; wakeup: Wakeup; error: string }
  | {
      kind: 'incomplete';
      keep: number;
      failures: number;
      wakeup: Wakeup;
      note: string;
      stall: Stall | null;
    }
  | { kind: 'stall'; keep: number; failures: number; wakeup: Wakeup; error: string }
  | { kind: 'done'; checkpoint: number }
  | { kind: 'budget'; checkpoint: number; wakeup: Wakeup; note: string }
  | { kind: 'next'; checkpoint: number };

/** The most a run that delivered something but moved no checkpoint backs off (5 s · 2²). */
const PARTIAL_PROGRESS_CAP = 3;

/** Decides what follows a window that was not fenced (engine/run.ts carries it out). */
export function decideAfterWindow(input: AfterWindowInput): AfterWindow {
  const { result, window, checkpoint, T, lagAllowance, tally, now } = input;
  if (result.kind === 'complete') {
    const complete = nextCheckpoint(checkpoint, window, lagAllowance);
    if (!hasBacklog(window, checkpoint, complete)) return { kind: 'done', checkpoint: complete };
    // A next window that would not fit in what is left of the budget would stop half-way and
    // be fetched again from its first page: better to continue in a fresh invocation now.
    if (input.outOfTime || input.budgetRemaining < input.windowCost) {
      const note = input.outOfTime
        ? 'stopped on the max_run budget; continuing'
        : 'stopped before a window that would not fit in the subrequest budget; continuing';
      return { kind: 'budget', checkpoint: complete, wakeup: continueAt(now), note };
    }
    return { kind: 'next', checkpoint: complete };
  }
  // A window that did not complete keeps what it did: sorted oldest first, C moves up to
  // what was handled (so a flaky upstream slows a backlog down instead of stopping it).
  const keep = partialCheckpoint(result.handledBelow, checkpoint, window, T, lagAllowance);
  const moved = keep > checkpoint || tally.windows > 0;
  if (result.kind === 'failed') {
    // A run that moved C retries at the base delay, so a flaky receiver cannot starve a
    // backlog; one that only delivered some records backs off, but not beyond a few seconds
    // (PARTIAL_PROGRESS_CAP), and one that achieved nothing backs off all the way.
    const failures = moved
      ? 1
      : tally.records > 0
        ? Math.min(input.failures + 1, PARTIAL_PROGRESS_CAP)
        : input.failures + 1;
    const at = retryAt(now, failures, result.failure, input.random, result.retryAfter);
    const wakeup: Wakeup = { at, reason: 'retry', failure: result.failure };
    return { kind: 'failed', keep, failures, wakeup, error: result.error };
  }
  // A rate limit resumes at the upstream's reset; a budget stop at once.
  const resumeAt = result.stop === 'rate_limit' ? (result.resumeAt ?? now) : now;
  const note =
    result.stop === 'rate_limit'
      ? `the upstream's rate limit is spent until ${isoTime(resumeAt)}; continuing then`
      : `stopped on the ${describeStop(result.stop)}; continuing`;
  if (moved) {
    return {
      kind: 'incomplete',
      keep,
      failures: 0,
      wakeup: continueAt(resumeAt),
      note,
      stall: null,
    };
  }
  // C did not move. Going on is worth it only while each attempt at this window gets further
  // into it than the last; otherwise it would start over forever. Delivering updates a budget
  // stop held back is progress too: they are stored, and each is delivered once.
  const stall = { from: window.from, pages: result.pages };
  const deeper =
    input.stall?.from !== window.from || result.pages > input.stall.pages || tally.released > 0;
  if ((tally.records > 0 || result.stop === 'rate_limit') && deeper) {
    const wakeup = continueAt(resumeAt);
    return { kind: 'incomplete', keep, failures: input.failures, wakeup, note, stall };
  }
  const failures = input.failures + 1;
  const at = Math.max(retryAt(now, failures, 'misconfigured', input.random), resumeAt);
  const error = windowTooBig(input, result.stop, result.pages);
  return {
    kind: 'stall',
    keep,
    failures,
    wakeup: { at, reason: 'retry', failure: 'misconfigured' },
    error,
  };
}

function continueAt(at: number): Wakeup {
  return { at, reason: 'continuation' };
}

function describeStop(stop: Stop): string {
  if (stop === 'rate_limit') return "upstream's rate limit";
  return stop === 'max_run' ? 'max_run budget' : 'subrequest budget (max_subrequests)';
}

/** The advice for a window whose pages alone exceed what one run may do. */
function windowTooBig(input: AfterWindowInput, stop: Stop, pages: number): string {
  const from = isoTime(input.window.from);
  const advice = [
    input.sorted ? null : 'set source.sorted = "asc" if the upstream returns records oldest first',
    input.bounded ? 'lower max_window' : 'set source.to_param and max_window to split it',
    stop === 'max_run'
      ? 'raise max_run'
      : stop === 'rate_limit'
        ? 'ask the upstream for a larger rate limit'
        : 'raise max_subrequests',
  ].filter((line): line is string => line !== null);
  return `the window from ${from} is too big for one run: it stopped on the ${describeStop(stop)} after ${pages} page(s) without getting further into it than the attempt before, and would only start over. ${advice.join('; or ')}.`;
}
