/** Retry delays (R12): capped exponential growth, with jitter so pollers do not stampede. */
export interface BackoffPolicy {
  base: number;
  cap: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { base: 5_000, cap: 10 * 60_000 };

/** The slow retry for errors a retry cannot fix (401/403/404): never a hot loop. */
export const MISCONFIGURED_RETRY = 30 * 60_000;

/**
 * Delay before retry number `failures` (1 = first retry): `min(cap, base·2^(failures−1))`,
 * then "equal jitter": a random point in its upper half, so it never collapses to zero.
 */
export function backoffDelay(
  failures: number,
  random: () => number,
  policy = DEFAULT_BACKOFF,
): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 30);
  const ceiling = Math.min(policy.cap, policy.base * 2 ** exponent);
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

export type FailureKind = 'transient' | 'rate_limited' | 'misconfigured';

/** When a failed run may try again: backoff, never before the upstream's reset, slow for config errors. */
export function retryAt(
  now: number,
  failures: number,
  kind: FailureKind,
  random: () => number,
  notBefore?: number,
): number {
  const delay = kind === 'misconfigured' ? MISCONFIGURED_RETRY : backoffDelay(failures, random);
  return Math.max(now + delay, notBefore ?? 0);
}
