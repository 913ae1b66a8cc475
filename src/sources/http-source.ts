import { redact } from '../config/interpolate.ts';
import type { SourceConfig } from '../config/schema.ts';
import { classifyUpstreamStatus } from '../engine/classify.ts';
import type { MalformedRecord, PageResult, Source, Update } from '../engine/ports.ts';
import type { Window } from '../engine/window.ts';
import { readPath } from './dot-path.ts';
import { isUpdate, readUpdate } from './read-update.ts';
import { retryAfter } from './retry-after.ts';
import { formatTime } from './time.ts';

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
    const url = this.buildUrl(window, cursor);
    const shown = `GET ${redact(url.toString(), this.secrets)}`;
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
      return { ok: false, kind: 'transient', error: `${shown}: ${redact(reason, this.secrets)}` };
    }
    const text = await response.text().catch(() => '');
    const snippet = JSON.stringify(redact(text.slice(0, SNIPPET), this.secrets));
    if (!response.ok) {
      const kind = classifyUpstreamStatus(response.status);
      const hint =
        kind === 'misconfigured' ? ' (check source.url and the credentials in source.headers)' : '';
      const after = retryAfter(response.headers.get('retry-after'), this.now());
      return {
        ok: false,
        kind,
        error: `${shown}: HTTP ${response.status}${hint}; body ${snippet}`,
        ...(after === undefined ? {} : { retryAfter: after }),
      };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return {
        ok: false,
        kind: 'bad_response',
        error: `${shown}: HTTP ${response.status} but the body is not JSON; body ${snippet}`,
      };
    }
    const items = readPath(body, this.config.items);
    if (!Array.isArray(items)) {
      const where = this.config.items === '' ? 'the body' : `"${this.config.items}"`;
      return {
        ok: false,
        kind: 'bad_response',
        error: `${shown}: ${where} is not an array of records; body ${snippet}`,
      };
    }
    const updates: Update[] = [];
    const malformed: MalformedRecord[] = [];
    for (const item of items) {
      const read = readUpdate(item, this.config);
      if (isUpdate(read)) updates.push(read);
      else malformed.push(read);
    }
    return { ok: true, updates, malformed, next: this.nextCursor(body, items.length) };
  }

  private buildUrl(window: Window, cursor: string | null): URL {
    const { config } = this;
    const url = new URL(config.url);
    for (const [key, value] of Object.entries(config.params)) url.searchParams.set(key, value);
    url.searchParams.set(config.from_param, formatTime(window.from, config.time_format));
    if (config.to_param !== undefined && window.bounded) {
      url.searchParams.set(config.to_param, formatTime(window.to, config.time_format));
    }
    if (cursor !== null && config.next.param !== undefined)
      url.searchParams.set(config.next.param, cursor);
    return url;
  }

  /** The cursor of the next page, or null when this was the last one. */
  private nextCursor(body: unknown, count: number): string | null {
    const { next } = this.config;
    if (next.type === 'none') return null;
    if (next.stop !== undefined && readPath(body, next.stop) === true) return null;
    if (next.more !== undefined && readPath(body, next.more) === false) return null;
    if (next.type === 'cursor' && next.path !== undefined) {
      // An empty page ends the window even if a cursor came with it: never page forever.
      const value = readPath(body, next.path);
      if (count === 0) return null;
      if (typeof value === 'number') return String(value);
      if (typeof value === 'string' && value !== '') return value;
      return null;
    }
    return null;
  }
}
