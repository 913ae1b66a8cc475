import * as z from 'zod';
import { redactAs } from './interpolate.ts';
import { maxDeletes } from './max-deletes.ts';

/**
 * `source.resume`: the checkpoint is an opaque token the upstream hands out at the end of a
 * round of pages (Microsoft Graph's `@odata.deltaLink`, Google's `nextSyncToken`), not a
 * time. A poller with it has no time window (engine/run.ts plans rounds instead).
 */
export const resumeSchema = z.strictObject({
  /** Dot path, on a round's last page, of the token. Required. */
  path: z.string().min(1),
  /** Optional query parameter the token is sent in on source.url; without it the token is a URL, requested as it is. */
  param: z.string().min(1).optional(),
  /** Query parameters of a round that starts from a token, instead of source.params (default none). */
  params: z.record(z.string(), z.string()).default({}),
  /**
   * What an answer to a round from a token says when the token expired (a resync follows): its
   * status (default [410]) or an error code at `error.code` in its body (default none; Graph:
   * "syncStateNotFound").
   */
  expired: z
    .strictObject({
      status: z.array(z.int().min(400).max(599)).default([410]),
      codes: z.array(z.string().min(1)).default([]),
    })
    .default({ status: [410], codes: [] }),
  /**
   * A full round (the first, or a resync) is a complete listing: ids known and not listed in
   * it are deletes, once a second full round, started at once, lacks them too (default false).
   */
  resync_deletes: z.boolean().default(false),
  /** Most deletes full rounds may deliver without a confirm, of the known ids (default "10%"). */
  max_deletes: maxDeletes.default({ percent: 10 }),
});

export type ResumeConfig = z.output<typeof resumeSchema>;

/** What of a poller the resume rules read. */
interface ResumeShape {
  start_from?: number | undefined;
  lag_allowance: number;
  max_window?: number | undefined;
  source: { url: string; to_param?: string | undefined; resume?: ResumeConfig | undefined };
  reconcile?: unknown;
}

/** One problem at its path. */
export interface ResumeProblem {
  path: (string | number)[];
  message: string;
}

/**
 * The keys a poller with `source.resume` cannot use: they shape a time window, and a round
 * has none (its start is the stored token).
 */
export function resumeProblems(poller: ResumeShape): ResumeProblem[] {
  if (poller.source.resume === undefined) return [];
  const problems: ResumeProblem[] = [];
  const windowOnly = 'does not apply with source.resume: a round has no time window';
  if (poller.start_from !== undefined) {
    problems.push({
      path: ['start_from'],
      message: `${windowOnly} (the first round lists everything from source.url)`,
    });
  }
  if (poller.lag_allowance !== 0) problems.push({ path: ['lag_allowance'], message: windowOnly });
  if (poller.max_window !== undefined) problems.push({ path: ['max_window'], message: windowOnly });
  if (poller.source.to_param !== undefined) {
    problems.push({ path: ['source', 'to_param'], message: windowOnly });
  }
  // Both keep a complete listing's ids, and what it found, in the reconciliation's tables.
  if (poller.source.resume.resync_deletes && poller.reconcile !== undefined) {
    problems.push({
      path: ['source', 'resume', 'resync_deletes'],
      message:
        'cannot be set with reconcile: a full round is the listing that finds deletes; choose one',
    });
  }
  return problems;
}

/**
 * Whether a token the upstream handed out as a URL may be requested: only on source.url's
 * origin, where the source's headers (its credentials) may go.
 */
export function tokenUrlProblem(sourceUrl: string, token: string): string | null {
  if (!URL.canParse(token))
    return 'the resume token is not a URL (set source.resume.param to send it as a parameter)';
  const origin = new URL(sourceUrl).origin;
  const at = new URL(token).origin;
  if (at !== origin) {
    return `the resume token is a URL on ${at}, not on source.url's origin (${origin}): the source's headers, its credentials, must not leave it`;
  }
  return null;
}

/**
 * A round's token as errors and logs show it: it reads every change of what the source's
 * credentials reach, so never in full. A URL loses its query (where delta tokens sit), any
 * other token all but its first 6 characters.
 */
export function shownToken(token: string): string {
  if (URL.canParse(token)) {
    const url = new URL(token);
    return url.search === '' ? `${url.origin}/…` : `${url.origin}${url.pathname}?…`;
  }
  return `${token.slice(0, 6)}…`;
}

/** `text` with a round's token (as sent, or as a URL parser rewrote it) shortened by `shownToken`. */
export function hideToken(text: string, token: string | null): string {
  if (token === null) return text;
  const shown = shownToken(token);
  const out = redactAs(text, token, shown);
  return URL.canParse(token) ? redactAs(out, new URL(token).href, shown) : out;
}

/** Whether an answer to a round from a token says the token expired (source.resume.expired). */
export function tokenExpired(
  expired: ResumeConfig['expired'],
  status: number,
  body: unknown,
): boolean {
  if (expired.status.includes(status)) return true;
  if (expired.codes.length === 0 || typeof body !== 'object' || body === null) return false;
  const error = 'error' in body ? body.error : undefined;
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : null;
  return typeof code === 'string' && expired.codes.includes(code);
}

/**
 * Query parameters whose value is a round's state wherever they appear: OData's links
 * (Graph's `@odata.nextLink` with `$skiptoken`, `@odata.deltaLink` with `$deltatoken`).
 */
const LINK_TOKENS = ['$skiptoken', '$deltatoken'];

/** What of a source names where its tokens are: the resume and the next-page settings. */
interface TokenPlaces {
  resume?: ResumeConfig | undefined;
  next: { type: string; param?: string | undefined; path?: string | undefined };
}

/**
 * `text` (an error, a log line) with the tokens a source's pages hand out shortened as
 * `shownToken` does, not only the round's own (hideToken): a failed page may quote a new one
 * (an error body that echoes a `$skiptoken`, a next link). A URL whose query holds a link token
 * loses its query; the value of a token parameter (those, resume.param, a cursor's param), or
 * of a token's key in a JSON body (resume.path, next.path), keeps its first 6 characters. Only
 * with source.resume: elsewhere a cursor is no credential's reach.
 */
export function hideNewTokens(text: string, source: TokenPlaces): string {
  if (source.resume === undefined) return text;
  const params = [...LINK_TOKENS, source.resume.param];
  if (source.next.type === 'cursor') params.push(source.next.param);
  const named = params.filter((param): param is string => param !== undefined && param !== '');
  let out = text.replace(/https?:\/\/[^\s"'<>\\]+/g, (url) => linkShown(url));
  const names = named.flatMap((param) => [param, encodeURIComponent(param)]).map(escaped);
  const value = new RegExp(`(^|[?&\\s"'(])(${names.join('|')})=([^&\\s"'#<>)]+)`, 'gi');
  out = out.replace(value, (_all, before: string, name: string, token: string) => {
    return `${before}${name}=${shortened(token)}`;
  });
  const keys = [source.resume.path, source.next.path].filter((key) => key !== undefined);
  for (const key of keys) {
    const field = new RegExp(`("${escaped(key)}"\\s*:\\s*")([^"]+)"`, 'g');
    out = out.replace(field, (_all, before: string, token: string) => {
      return `${before}${shortened(token)}"`;
    });
  }
  return out;
}

/** A token found in text, shortened: an http(s) URL as shownToken shows it, else its start. */
function shortened(token: string): string {
  return /^https?:\/\//i.test(token) ? shownToken(token) : `${token.slice(0, 6)}…`;
}

/** A URL as text shows it: without its query when the query holds a link token (LINK_TOKENS). */
function linkShown(url: string): string {
  if (!URL.canParse(url)) return url;
  const keys = [...new URL(url).searchParams.keys()].map((key) => key.toLowerCase());
  return keys.some((key) => LINK_TOKENS.includes(key)) ? shownToken(url) : url;
}

/** `text` for a RegExp that matches it as it is. */
function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
