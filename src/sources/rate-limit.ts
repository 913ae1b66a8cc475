/** What the upstream said about its rate limit, as absolute times in ms. */
export interface RateLimitHint {
  /** Do not ask again before this (Retry-After on a 429/503, or the reset of an exhausted quota). */
  notBefore?: number;
  /** The quota is spent (`x-ratelimit-remaining: 0`): a rejection is a rate limit, not an auth error. */
  exhausted: boolean;
}

/**
 * Reads `Retry-After` (seconds or an HTTP date) and GitHub-style `x-ratelimit-remaining` /
 * `x-ratelimit-reset` (epoch seconds) headers.
 */
export function readRateLimit(headers: Headers, now: number): RateLimitHint {
  const retryAfter = parseRetryAfter(headers.get('retry-after'), now);
  const remaining = headers.get('x-ratelimit-remaining');
  const exhausted = remaining !== null && Number(remaining.trim()) === 0;
  const reset = exhausted ? parseReset(headers.get('x-ratelimit-reset'), now) : undefined;
  const notBefore = maxDefined(retryAfter, reset);
  return { exhausted, ...(notBefore === undefined ? {} : { notBefore }) };
}

function parseRetryAfter(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return now + Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : date;
}

/** `x-ratelimit-reset` is epoch seconds (GitHub); a small number is taken as seconds from now. */
function parseReset(header: string | null, now: number): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) return undefined;
  const value = Number(header.trim());
  return value > 1e9 ? value * 1000 : now + value * 1000;
}

function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}
