/** What the upstream said about its rate limit, as absolute times in ms. */
export interface RateLimitHint {
  /** Do not ask again before this (Retry-After on a 429/503, or the reset of an exhausted quota). */
  notBefore?: number;
  /** The quota is spent (`x-ratelimit-remaining: 0`): a rejection is a rate limit, not an auth error. */
  exhausted: boolean;
  /** Hints that were garbage or beyond `max_rate_limit_wait`, for the logs. */
  notes: string[];
}

/** The headers real APIs use: GitHub/Zendesk `x-ratelimit-*`, IETF `ratelimit-*`, Twitter `x-rate-limit-*`. */
const REMAINING = ['x-ratelimit-remaining', 'ratelimit-remaining', 'x-rate-limit-remaining'];
const RESET = ['x-ratelimit-reset', 'ratelimit-reset', 'x-rate-limit-reset'];

/** Below this a bare number is a delay in seconds; from here to EPOCH_MS_FROM, epoch seconds (2001+). */
const EPOCH_SECONDS_FROM = 1e9;
/** From here a bare number is epoch milliseconds (1973+ as ms; 5138+ as seconds). */
const EPOCH_MS_FROM = 1e11;
/** Beyond this no reading of a number is a time this side of the year 5138. */
const EPOCH_MS_UNTIL = 1e14;

/**
 * Reads `Retry-After` and the rate-limit reset headers, in every form real APIs send them:
 * delta seconds, an HTTP date, epoch seconds or epoch milliseconds. A hint that is garbage is
 * ignored, and none may hold the poller off longer than `maxWait` (max_rate_limit_wait):
 * an upstream's bug must not park a poller until the year 58385.
 */
export function readRateLimit(headers: Headers, now: number, maxWait: number): RateLimitHint {
  const notes: string[] = [];
  const read = (name: string) => {
    const value = headers.get(name);
    if (value === null) return undefined;
    const at = parseHintTime(value, now);
    if (at === undefined)
      notes.push(`ignored ${name}: ${JSON.stringify(value.slice(0, 40))} is not a time or a delay`);
    return at;
  };
  const retryAfter = read('retry-after');
  const remainingHeader = REMAINING.find((name) => headers.has(name));
  const remaining = remainingHeader === undefined ? null : headers.get(remainingHeader);
  const exhausted = remaining !== null && remaining.trim() !== '' && Number(remaining.trim()) === 0;
  const resetHeader = RESET.find((name) => headers.has(name));
  const reset = exhausted && resetHeader !== undefined ? read(resetHeader) : undefined;
  let notBefore = maxDefined(retryAfter, reset);
  if (notBefore !== undefined && notBefore > now + maxWait) {
    notes.push(
      `the upstream asked for a pause until ${describe(notBefore)}, beyond max_rate_limit_wait: waiting ${Math.round(maxWait / 1000)}s instead`,
    );
    notBefore = now + maxWait;
  }
  return { exhausted, notes, ...(notBefore === undefined ? {} : { notBefore }) };
}

/**
 * A hint as an absolute time: a number is a delay in seconds (below 1e9), epoch seconds
 * (below 1e11) or epoch milliseconds (below 1e14); anything else must be an HTTP date.
 * Undefined for garbage. A time already past means "now".
 */
export function parseHintTime(value: string, now: number): number | undefined {
  const text = value.trim();
  let at: number;
  if (/^\d+(\.\d+)?$/.test(text)) {
    const number = Number(text);
    if (number < EPOCH_SECONDS_FROM) at = now + number * 1000;
    else if (number < EPOCH_MS_FROM) at = number * 1000;
    else if (number < EPOCH_MS_UNTIL) at = number;
    else return undefined;
  } else {
    // An HTTP date has a weekday or a month name; Date.parse would also take "1" or "2026".
    if (!/[a-z]{3}/i.test(text)) return undefined;
    at = Date.parse(text);
    if (!Number.isFinite(at)) return undefined;
  }
  return Math.max(Math.round(at), now);
}

function describe(ms: number): string {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(ms);
}

function maxDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.max(a, b);
}
