/**
 * A request to the upstream before it is sent: every request of a source (each page of the
 * stream, the deletions stream and the listing, and reconcile.fetch) is built as one of these
 * (sources/request/build.ts), then authorized and sent. One shape, so that what is sent and
 * what errors show (`shownDraft`) never drift apart.
 */

/** The methods a source may use: `source.method`. */
export type Method = 'GET' | 'POST';

/** One request, built and not yet sent. */
export interface RequestDraft {
  method: Method;
  url: URL;
  /** The configured headers with `accept`; `content-type` is added when a body is sent. */
  headers: Readonly<Record<string, string>>;
  /** A JSON value sent as the body (`source.body`, rendered), or undefined for none. */
  body: unknown;
}

/** Headers every request of a source carries: JSON is what it reads. */
export function baseHeaders(configured: Readonly<Record<string, string>>): Record<string, string> {
  return { accept: 'application/json', ...configured };
}

/**
 * The Request to send for `draft` to `url` (a redirect's target, or the draft's own), before
 * source.auth's `authorize` sets its credential on it: a body goes as JSON, with
 * `Content-Type: application/json` unless the configured headers name another.
 */
export function requestOf(draft: RequestDraft, init: { url?: URL; signal?: AbortSignal }): Request {
  const headers: Record<string, string> = { ...draft.headers };
  const hasBody = draft.body !== undefined;
  if (hasBody && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  return new Request(init.url ?? draft.url, {
    method: draft.method,
    headers,
    ...(hasBody ? { body: JSON.stringify(draft.body) } : {}),
    redirect: 'manual',
    ...(init.signal === undefined ? {} : { signal: init.signal }),
  });
}

/** The request as errors and logs name it: `POST https://…` (redact it before showing). */
export function shownDraft(draft: Pick<RequestDraft, 'method'>, url: URL | string): string {
  return `${draft.method} ${url.toString()}`;
}
