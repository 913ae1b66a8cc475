import type { FailingUpdate } from './ports.ts';

/** A stream's stored failing updates after a window (R19). */
export interface Retrying {
  count: number;
  /** The first reason this window gave. */
  error: string;
  /** Some were refused by the receiver (not only held back by a budget stop or a wait). */
  failed: boolean;
}

/**
 * The most failing updates a stream stores while its checkpoint moves on (R19). Past it, a
 * window with a failure fails as a whole (R2) and C waits: a receiver that fails most of what
 * it is sent is not papered over by a table that grows without end.
 */
export const MAX_RETRYING = 1_000;

/** What a stream leaves failing after a window (`example`: its first reason), or undefined. */
export function retryingOf(
  failing: ReadonlyMap<string, FailingUpdate>,
  example: string | undefined,
): Retrying | undefined {
  if (failing.size === 0) return undefined;
  let failed = false;
  for (const failure of failing.values()) failed ||= failure.attempts > 0;
  const error = `the first: ${example ?? 'stored by an earlier run'}`;
  return { count: failing.size, error, failed };
}
