import type { Window } from './window.ts';

/**
 * How far a window is handled, while its records come oldest first (`source.sorted = "asc"`):
 * everything stamped below the last record of an unbroken run of handled records is handled,
 * so a window that cannot finish in one run still moves C that far (R2 holds: nothing below
 * the point is left undelivered). Pure: the window's loop feeds it each page.
 */
export interface SortedProgress {
  /** Still oldest first: a page that goes back in time ends the claim for good. */
  readonly ordered: boolean;
  /** Every record so far was handled: the claim can still grow. */
  readonly allHandled: boolean;
  /** Every record stamped below this is handled (undefined: nothing yet). */
  readonly handledBelow: number | undefined;
  readonly lastVersion: number;
}

/** A window's progress before its first page; `sorted` is the config's promise of order. */
export function startProgress(sorted: boolean): SortedProgress {
  return {
    ordered: sorted,
    allHandled: true,
    handledBelow: undefined,
    lastVersion: Number.NEGATIVE_INFINITY,
  };
}

/**
 * The progress after a page: its records in the order served, and whether each is handled
 * (asked only while everything before it was).
 */
export function afterPage<R extends { versionMs: number }>(
  progress: SortedProgress,
  records: readonly R[],
  handled: (record: R, index: number) => boolean,
): SortedProgress {
  let { ordered, allHandled, handledBelow, lastVersion } = progress;
  records.forEach((record, index) => {
    if (record.versionMs < lastVersion) ordered = false;
    lastVersion = record.versionMs;
    allHandled &&= handled(record, index);
    if (allHandled) handledBelow = record.versionMs;
  });
  return { ordered, allHandled, handledBelow, lastVersion };
}

/**
 * The point C may move to: never past a version still failing (or held behind one), so the
 * next window asks for it again (R2, R8). Undefined when the window is not in order.
 */
export function safeBelow(
  progress: SortedProgress,
  failingVersions: Iterable<number>,
): number | undefined {
  if (!progress.ordered || progress.handledBelow === undefined) return undefined;
  let bound = progress.handledBelow;
  for (const version of failingVersions) bound = Math.min(bound, version);
  return bound;
}

/**
 * Where C may move for what a window handled so far: up to `handledBelow`, never past the
 * window's end nor `T − lag_allowance` (R1), never back.
 */
export function partialCheckpoint(
  handledBelow: number | undefined,
  checkpoint: number,
  window: Window,
  T: number,
  lagAllowance: number,
): number {
  if (handledBelow === undefined) return checkpoint;
  return Math.max(checkpoint, Math.min(handledBelow, window.to, T - lagAllowance));
}

/**
 * Whether a sorted window commits its progress now, and where to: at most every `everyMs`
 * (often enough that a crash loses little, rarely enough that the ledger's boundary second is
 * not rewritten page after page), and only forward. Null: not now.
 */
export function progressToCommit(input: {
  handledBelow: number;
  committed: number;
  window: Window;
  T: number;
  lagAllowance: number;
  now: number;
  lastCommitAt: number;
  everyMs: number;
}): number | null {
  if (input.now - input.lastCommitAt < input.everyMs) return null;
  const { handledBelow, committed, window, T, lagAllowance } = input;
  const partial = partialCheckpoint(handledBelow, committed, window, T, lagAllowance);
  return partial > committed ? partial : null;
}
