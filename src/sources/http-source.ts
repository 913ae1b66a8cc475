import { redact } from '../config/interpolate.ts';
import type { SourceConfig } from '../config/schema.ts';
import { classifyUpstreamStatus, type UpstreamFailureKind } from '../engine/classify.ts';
import type { MalformedRecord, PageResult, Source, Update } from '../engine/ports.ts';
import type { Window } from '../engine/window.ts';
import { readPath } from './dot-path.ts';
import { nextPage, pageUrl } from './paging.ts';
import { readRateLimit } from './rate-limit.ts';
import { isUpdate, readUpdate } from './read-update.ts';
import { measureSkew } from './skew.ts';

/** How requests leave the Worker: global fetch, or a service binding's fetch. */
export type HttpFetch = (request: Request) => Promise<Response>;

const SNIPPET = 200;

/** The HTTP source: GET `url` with the window in query parameters, page by page. */
export class HttpSource implements Source {
  constructor(
    private readonly config: SourceConfig,
    private readonly fetcher: HttpFetch,
    private readonly secrets: readonly string[],
    private readonly now: () => number,
  ) {}

  async fetchPage(window: Window, cursor: string | null): Promise<PageResult> {
    const url = pageUrl(this.config, window, cursor);
    const shown = `GET ${this.redact(url.toString())}`;
    const sentAt = this.now();
    let response: Response;
    try {
      response = await this.fetcher(
        new Request(url, {
          headers: { accept: 'application/json', ...this.config.headers },
          signal: AbortSignal.timeout(this.config.timeout),
        }),
      );
    } catch (error) {
      const reason =
        error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : String(error);
      return { ok: false, kind: 'transient', error: `${shown}: ${this.redact(reason)}` };
    }
    const text = await response.text().catch(() => '');
    const receivedAt = this.now();
    const skew = measureSkew(response.headers.get('date'), sentAt, receivedAt);
    const measured = skew === undefined ? {} : { skewMs: skew };
    const limit = readRateLimit(response.headers, receivedAt);
    // Redacted before it is cut, so a secret across the cut cannot leave half of itself.
    const snippet = JSON.stringify(this.redact(text).slice(0, SNIPPET));
    const failure = (kind: UpstreamFailureKind, what: string): PageResult => ({
      ok: false,
      kind,
      error: `${shown}: HTTP ${response.status}${what}; body ${snippet}`,
      ...measured,
      ...(limit.notBefore === undefined ? {} : { retryAfter: limit.notBefore }),
    });

    if (!response.ok) {
      if (response.status === 429 || (limit.notBefore !== undefined && limit.exhausted)) {
        return failure('rate_limited', ' (rate limited)');
      }
      if (response.status === 503 && limit.notBefore !== undefined)
        return failure('rate_limited', '');
      const kind = classifyUpstreamStatus(response.status);
      const hint =
        kind === 'misconfigured' ? ' (check source.url and the credentials in source.headers)' : '';
      return failure(kind, hint);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return failure('bad_response', ' but the body is not JSON');
    }
    const items = readPath(body, this.config.items);
    if (!Array.isArray(items)) {
      const where = this.config.items === '' ? 'the body' : `"${this.config.items}"`;
      return failure('bad_response', ` but ${where} is not an array of records`);
    }
    const next = nextPage(this.config, { url, body, headers: response.headers, items, cursor });
    if (!next.ok) return failure('misconfigured', ` but ${next.error}`);
    const updates: Update[] = [];
    const malformed: MalformedRecord[] = [];
    for (const item of items) {
      const read = readUpdate(item, this.config);
      if (isUpdate(read)) updates.push(read);
      else malformed.push(read);
    }
    return {
      ok: true,
      updates,
      malformed,
      next: next.next,
      ...measured,
      // The quota is spent: this page is good, but the next request must wait for the reset.
      ...(limit.exhausted && limit.notBefore !== undefined ? { pauseUntil: limit.notBefore } : {}),
    };
  }

  private redact(text: string): string {
    return redact(text, this.secrets);
  }
}
