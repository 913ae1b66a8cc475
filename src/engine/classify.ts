/**
 * What a delivery attempt came to (SEMANTICS.md, "What each failure gets"). A batch that
 * got partly through (a queue batch sent in parts) says how many of its first items made it.
 */
export type DeliveryResult =
  | { kind: 'delivered' }
  /** 5xx, timeout, 408, 429, network: retried next run, counts toward max_attempts. */
  | { kind: 'retry'; error: string; deliveredPrefix?: number }
  /** 400, 409, 422 and other 4xx: counts toward max_attempts, then a dead letter. */
  | { kind: 'rejected'; error: string; deliveredPrefix?: number }
  /**
   * 401, 403, 404, and any 3xx (deliveries never follow redirects): the receiver is
   * misconfigured; the run fails instead of dead-lettering everything.
   */
  | { kind: 'misconfigured'; error: string };

/** Classifies a receiver's HTTP status. */
export function classifyDeliveryStatus(status: number, error: string): DeliveryResult {
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  if (status >= 300 && status < 400) return { kind: 'misconfigured', error };
  if (status === 401 || status === 403 || status === 404) return { kind: 'misconfigured', error };
  if (status === 408 || status === 429 || status >= 500) return { kind: 'retry', error };
  return { kind: 'rejected', error };
}

/** How an upstream failure is retried (R12). */
export type UpstreamFailureKind = 'transient' | 'rate_limited' | 'misconfigured' | 'bad_response';

/** Classifies an upstream HTTP status that is not a success. */
export function classifyUpstreamStatus(status: number): UpstreamFailureKind {
  if (status === 401 || status === 403 || status === 404) return 'misconfigured';
  if (status === 429) return 'rate_limited';
  return 'transient';
}
