import { redact } from '../config/interpolate.ts';
import { hideNewTokens, hideToken, tokenExpired, tokenUrlProblem } from '../config/resume.ts';
import type { SourceConfig } from '../config/schema.ts';
import { type Deadline, DeadlineClock, TIMED_OUT } from '../deadline.ts';
import { classifyUpstreamStatus, type UpstreamFailureKind } from '../engine/classify.ts';
import type { MalformedRecord, PageResult, Source, Update } from '../engine/ports.ts';
import type { Window } from '../engine/window.ts';
import type { Authorize, Authorizer } from './auth/authorizer.ts';
import { sendAuthorized } from './auth/send.ts';
import { readPath } from './dot-path.ts';
import { fetchFailure } from './network-error.ts';
import { pageErrors } from './page-errors.ts';
import { type NextPathMemo, nextPage, nextPathSighting } from './paging/index.ts';
import { readRateLimit } from './rate-limit.ts';
import { readBody } from './read-body.ts';
import { isUpdate, readUpdate } from './read-update.ts';
import { pageDraft, windowDraft } from './request/build.ts';
import { type RequestDraft, requestOf, shownDraft } from './request/draft.ts';
import { MissingParentValue } from './request/placeholders.ts';
import { measureSkew } from './skew.ts';

/** How requests leave the Worker: global fetch, or a service binding's fetch. */
export type HttpFetch = (request: Request) => Promise<Response>;

/** What the source needs besides its config, with the defaults of a poller's keys. */
export interface HttpSourceOptions {
  /** max_rate_limit_wait: the longest any rate-limit hint may hold the poller off (default 1h). */
  maxRateLimitWait?: number;
  /** Shows a page URL without secret values: built from the config's `${NAME}` template. */
  displayUrl?: (window: Window, cursor: string | null) => string;
  /** One structured log line (ignored rate-limit hints). */
  log?: (line: Record<string, unknown>) => void;
  /** source.auth: what authorizes each request (sources/auth/). */
  auth?: Authorizer;
  /** What each page showed of the next-page body path (a misspelt one is warned of). */
  nextPaths?: NextPathMemo;
  /**
   * source.children: a 404 means the parent went away between its page and this request, so
   * it has no children (not a misconfigured URL).
   */
  missingIsEmpty?: boolean;
}

const SNIPPET = 200;
const HOUR = 3_600_000;
/** Same-origin redirects followed per request; a chain longer than this is an upstream fault. */
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** The redirects that keep a request's method and body (RFC 9110): the only ones a POST follows. */
const KEEPS_METHOD = new Set([307, 308]);

type Fetched = { ok: true; response: Response; url: URL } | { ok: false; page: PageResult };

/**
 * The HTTP source: each page's request (sources/request/: `url`, `params`, `method`, `body`,
 * the window's bounds and the paging style's value), sent and read, page by page.
 */
export class HttpSource implements Source {
  private readonly maxRateLimitWait: number;
  /** The last window's request without its page's step: built once, not once per page. */
  private lastWindow: { window: Window; draft: RequestDraft } | undefined;
  /** One timer for the pages in flight (the look-ahead), not one per page. */
  private readonly deadlines: DeadlineClock;

  constructor(
    private readonly config: SourceConfig,
    private readonly fetcher: HttpFetch,
    private readonly secrets: readonly string[],
    private readonly now: () => number,
    private readonly options: HttpSourceOptions = {},
  ) {
    this.maxRateLimitWait = options.maxRateLimitWait ?? HOUR;
    this.deadlines = new DeadlineClock(config.timeout);
  }

  hold(): () => void {
    return this.deadlines.hold();
  }

  async fetchPage(
    window: Window,
    cursor: string | null,
    cancel?: AbortSignal,
  ): Promise<PageResult> {
    // A round's token is shown shortened wherever an error or a log names it (config/resume.ts).
    const token = window.round?.token ?? null;
    const hide = (text: string) => hideNewTokens(hideToken(this.redact(text), token), this.config);
    // The page as errors and logs show it, secrets redacted: built only when one needs it.
    let shownText: string | undefined;
    const shown = () => {
      shownText ??= shownDraft(this.config, this.shownUrl(window, cursor, hide));
      return shownText;
    };
    // A token handed out as a URL goes only where the source's credentials may go.
    if (
      token !== null &&
      this.config.resume !== undefined &&
      this.config.resume.param === undefined
    ) {
      const problem = tokenUrlProblem(this.config.url, token);
      if (problem !== null) return { ok: false, kind: 'misconfigured', error: problem };
    }
    let draft: RequestDraft;
    try {
      draft = pageDraft(this.config, window, cursor, this.windowDraft(window));
    } catch (error) {
      // A parent without the value its children's request needs: it is kept as a dead letter
      // (R8), its children not asked for.
      if (error instanceof MissingParentValue && window.parent !== undefined) {
        const raw = window.parent.record;
        return { ok: true, updates: [], malformed: [{ reason: error.message, raw }], next: null };
      }
      return { ok: false, kind: 'bad_response', error: `${shown()}: the page URL does not parse` };
    }
    const deadline = this.deadlines.start(cancel);
    try {
      return await this.fetchWithin(draft, shown, hide, cursor, deadline, token !== null);
    } finally {
      deadline.clear();
    }
  }

  private async fetchWithin(
    draft: RequestDraft,
    shown: () => string,
    hide: (text: string) => string,
    cursor: string | null,
    deadline: Deadline,
    fromToken: boolean,
  ): Promise<PageResult> {
    const sentAt = this.now();
    const fetched = await this.follow(draft, shown, hide, deadline);
    if (!fetched.ok) return fetched.page;
    const { response, url } = fetched;
    const body = await readBody(response, this.config.max_body, deadline);
    const receivedAt = this.now();
    const skew = measureSkew(response.headers.get('date'), sentAt, receivedAt);
    const measured = skew === undefined ? {} : { skewMs: skew };
    const limit = readRateLimit(response.headers, receivedAt, this.maxRateLimitWait);
    for (const note of limit.notes) {
      this.options.log?.({ event: 'rate_limit_hint', url: shown(), note: hide(note) });
    }
    const text = body.ok ? body.text : '';
    /** A failed page, shown with the start of its body, or of what `quoted` says the body said. */
    const failure = (
      kind: UpstreamFailureKind,
      what: string,
      quoted = { what: 'body', text },
    ): Extract<PageResult, { ok: false }> => ({
      ok: false,
      kind,
      // Redacted before it is cut, so a secret across the cut cannot leave half of itself;
      // and only here, on a failure: a good page's body is never scanned for secrets.
      error: `${shown()}: HTTP ${response.status}${what}${body.ok ? `; ${quoted.what} ${JSON.stringify(hide(quoted.text).slice(0, SNIPPET))}` : ''}`,
      ...measured,
      ...(limit.notBefore === undefined ? {} : { retryAfter: limit.notBefore }),
    });

    if (!body.ok) {
      if (body.reason === 'timed_out') {
        return failure('transient', `, then the body timed out after ${this.config.timeout} ms`);
      }
      if (body.reason === 'too_big') {
        return failure(
          'bad_response',
          ` but the body is larger than source.max_body (${body.limit} bytes); ask for smaller pages (a page-size parameter in source.params) or raise max_body`,
        );
      }
      return failure('transient', ` but the body broke off: ${hide(body.error)}`);
    }
    if (!response.ok) {
      // A round from a token the upstream no longer knows: the engine resyncs (engine/rounds.ts).
      const resume = this.config.resume;
      if (fromToken && resume && tokenExpired(resume.expired, response.status, parseOrNull(text))) {
        return { ...failure('misconfigured', ': the resume token expired'), expired: true };
      }
      if (response.status === 404 && this.options.missingIsEmpty) {
        return { ok: true, updates: [], malformed: [], next: null, missing: true, ...measured };
      }
      if (response.status === 429 || (limit.notBefore !== undefined && limit.exhausted)) {
        return failure('rate_limited', ' (rate limited)');
      }
      if (response.status === 503 && limit.notBefore !== undefined)
        return failure('rate_limited', '');
      const kind = classifyUpstreamStatus(response.status);
      const hint =
        kind !== 'misconfigured'
          ? ''
          : this.options.auth
            ? ' (check source.url and source.auth)'
            : ' (check source.url and the credentials in source.headers)';
      return failure(kind, hint);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return failure('bad_response', ' but the body is not JSON');
    }
    const errors = pageErrors(parsed, this.config.errors);
    if (errors !== null) {
      // Retried like a 5xx. An upstream that tells a rate limit in the body may also send the
      // quota's headers (GitHub's x-ratelimit-*): then it is one, waiting for their reset.
      const kind = limit.notBefore === undefined ? 'transient' : 'rate_limited';
      return failure(kind, ` but the page reports errors at "${this.config.errors}"`, {
        what: 'the upstream says',
        text: errors,
      });
    }
    const items = readPath(parsed, this.config.items);
    if (!Array.isArray(items)) {
      const where = this.config.items === '' ? 'the body' : `"${this.config.items}"`;
      return failure('bad_response', ` but ${where} is not an array of records`);
    }
    const page = { url, body: parsed, headers: response.headers, items, cursor };
    const next = nextPage(this.config, page);
    if (!next.ok) return failure(next.kind, ` but ${hide(next.error)}`);
    const sighting = this.options.nextPaths && nextPathSighting(this.config, page);
    if (sighting) this.options.nextPaths?.saw(sighting.path, sighting.present);
    const updates: Update[] = [];
    const malformed: MalformedRecord[] = [];
    for (const item of items) {
      const read = readUpdate(item, this.config);
      if (isUpdate(read)) updates.push(read);
      else malformed.push(read);
    }
    const resume = this.config.resume && readPath(parsed, this.config.resume.path);
    return {
      ok: true,
      updates,
      malformed,
      next: next.next,
      ...(typeof resume === 'string' && resume !== '' ? { resume } : {}),
      ...measured,
      // The quota is spent: this page is good, but the next request must wait for the reset.
      ...(limit.exhausted && limit.notBefore !== undefined ? { pauseUntil: limit.notBefore } : {}),
    };
  }

  /**
   * Sends the request authorized by source.auth (renewed once after a 401: sendAuthorized),
   * following redirects by hand: the configured headers (credentials) go to source.url's
   * origin only, so a redirect elsewhere is refused, never followed.
   */
  private async follow(
    draft: RequestDraft,
    shown: () => string,
    hide: (text: string) => string,
    deadline: Deadline,
  ): Promise<Fetched> {
    const sent = await sendAuthorized(
      this.options.auth,
      (authorize) => this.followFrom(draft, shown, hide, deadline, authorize),
      (fetched) => (fetched.ok ? fetched.response : null),
    );
    if (sent.ok) return sent.sent;
    const { kind, error, retryAfter } = sent;
    const page = { ok: false as const, kind, error: `${shown()}: ${hide(error)}` };
    return { ok: false, page: retryAfter === undefined ? page : { ...page, retryAfter } };
  }

  private async followFrom(
    draft: RequestDraft,
    shown: () => string,
    hide: (text: string) => string,
    deadline: Deadline,
    authorize: Authorize,
  ): Promise<Fetched> {
    let url = draft.url;
    for (let hop = 0; ; hop += 1) {
      let response: Response;
      try {
        // source.auth sets its credential on each hop's request (a header, a query parameter).
        const request = await authorize(requestOf(draft, { url, signal: deadline.signal }));
        const sent = this.fetcher(request);
        const answer = await Promise.race([sent, deadline.expired]);
        if (answer === TIMED_OUT) throw new DOMException('timed out', 'TimeoutError');
        response = answer;
      } catch (error) {
        const reason =
          error instanceof Error && error.name === 'TimeoutError'
            ? `timed out: ${url.host} did not answer within source.timeout (${this.config.timeout} ms)`
            : fetchFailure(error, url);
        return {
          ok: false,
          page: { ok: false, kind: 'transient', error: `${shown()}: ${hide(reason)}` },
        };
      }
      if (!REDIRECTS.has(response.status)) return { ok: true, response, url };
      await response.body?.cancel().catch(() => undefined);
      const location = response.headers.get('location');
      let target: URL | null = null;
      try {
        target = location === null ? null : new URL(location, url);
      } catch {
        target = null;
      }
      const redirected = (kind: UpstreamFailureKind, why: string): Fetched => ({
        ok: false,
        page: { ok: false, kind, error: `${shown()}: HTTP ${response.status} redirect ${why}` },
      });
      if (target === null) return redirected('bad_response', 'without a usable Location header');
      // A 301, 302 or 303 turns a POST into a GET without its body, which would ask for
      // something else than the window: not followed.
      if (draft.method === 'POST' && !KEEPS_METHOD.has(response.status)) {
        return redirected(
          'misconfigured',
          `to ${hide(target.toString())}, which would turn the POST into a GET without its body (only 307 and 308 keep them): set source.url to the final address`,
        );
      }
      const origin = new URL(this.config.url).origin;
      if (target.origin !== origin) {
        return redirected(
          'misconfigured',
          `to ${hide(target.toString())}, another origin than source.url's (${origin}): the request headers must not leave it, so it was not followed; set source.url to the final address`,
        );
      }
      if (hop + 1 >= MAX_REDIRECTS) {
        return redirected(
          'bad_response',
          `chain longer than ${MAX_REDIRECTS} hops (last to ${hide(target.toString())})`,
        );
      }
      url = target;
    }
  }

  private windowDraft(window: Window): RequestDraft {
    if (this.lastWindow?.window !== window) {
      this.lastWindow = { window, draft: windowDraft(this.config, window) };
    }
    return this.lastWindow.draft;
  }

  private shownUrl(window: Window, cursor: string | null, hide: (text: string) => string): string {
    if (this.options.displayUrl) return hide(this.options.displayUrl(window, cursor));
    try {
      return hide(pageDraft(this.config, window, cursor).url.toString());
    } catch {
      return hide(String(cursor));
    }
  }

  private redact(text: string): string {
    const learned = this.options.auth?.learned() ?? [];
    return redact(text, learned.length === 0 ? this.secrets : [...this.secrets, ...learned]);
  }
}

/** A body as JSON, or null when it is none. */
function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
