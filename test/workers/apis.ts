import type { FakeHost } from './fakes.ts';

/** One stored version of a record in a fake API. */
export interface ApiUpdate {
  id: string;
  /** Epoch ms; each API writes it its own way. */
  at: number;
  visibleAt: number;
}

type Scripted = (request: Request) => Response | Promise<Response>;

/** What the three public-API fakes share: a store of updates, scripted failures, a request log. */
abstract class FakeApi implements FakeHost {
  readonly updates: ApiUpdate[] = [];
  readonly requests: URL[] = [];
  private readonly scripted: Scripted[] = [];
  /** Headers added to every normal answer (rate-limit quotas, Date). */
  headers: Record<string, string> = {};
  /**
   * How far the API's clock is ahead of the test's: time that passed upstream between two
   * runs (the poller's own clock, and so its T, stays the test's).
   */
  clockAhead = 0;

  add(id: string, at: number, visibleAt = Number.NEGATIVE_INFINITY): ApiUpdate {
    const update = { id, at, visibleAt };
    this.updates.push(update);
    return update;
  }

  respondOnce(response: Scripted): void {
    this.scripted.push(response);
  }

  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.requests.push(url);
    const scripted = this.scripted.shift();
    if (scripted) return scripted(request);
    const response = this.answer(url, Date.now() + this.clockAhead);
    for (const [name, value] of Object.entries(this.headers)) response.headers.set(name, value);
    return response;
  }

  protected visible(now: number, from: number, to = Number.POSITIVE_INFINITY): ApiUpdate[] {
    return this.updates
      .filter((u) => u.at >= from && u.at < to && u.visibleAt <= now)
      .sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
  }

  protected abstract answer(url: URL, now: number): Response;
}

const seconds = (ms: number) => Math.floor(ms / 1000);
const isoSeconds = (ms: number) => new Date(seconds(ms) * 1000).toISOString().replace('.000Z', 'Z');

/** Zendesk's incremental export leaves out the changes of the last minute. */
export const ZENDESK_HIDES_MS = 60_000;

/**
 * Zendesk-like incremental export: `start_time` in unix seconds (inclusive), records oldest
 * first with ISO `updated_at` in whole seconds, `next_page` (absolute or relative URL with an
 * opaque cursor) and `end_of_stream` on the last page. Like Zendesk's, it leaves out the
 * changes of the last minute: a ticket changed 30 s ago shows up a minute after its change,
 * stamped 30 s before the run that could not see it.
 */
export class FakeZendesk extends FakeApi {
  static readonly origin = 'https://acme.zendesk.test';
  pageSize = 3;
  relativeLinks = false;

  protected answer(url: URL, now: number): Response {
    const cursor = url.searchParams.get('cursor');
    const [start, offset] = cursor
      ? cursor.split('.').map(Number)
      : [Number(url.searchParams.get('start_time')), 0];
    const all = this.visible(now, (start ?? 0) * 1000).filter(
      (u) => u.at <= now - ZENDESK_HIDES_MS,
    );
    const page = all.slice(offset ?? 0, (offset ?? 0) + this.pageSize);
    const endOfStream = (offset ?? 0) + this.pageSize >= all.length;
    const path = `/api/v2/incremental/tickets/cursor.json?cursor=${start}.${(offset ?? 0) + this.pageSize}`;
    return Response.json({
      tickets: page.map((u) => ({
        id: Number(u.id.replace(/\D/g, '')) || u.id,
        subject: `ticket ${u.id}`,
        updated_at: isoSeconds(u.at),
      })),
      next_page: this.relativeLinks ? path : `${FakeZendesk.origin}${path}`,
      end_of_stream: endOfStream,
      count: page.length,
    });
  }
}

/**
 * GitHub-like issue listing: `since` ISO 8601 (inclusive), a bare array sorted by update
 * time ascending, numbered pages linked by an RFC 8288 `Link` header with several rels.
 */
export class FakeGitHub extends FakeApi {
  static readonly origin = 'https://api.github.test';

  protected answer(url: URL, now: number): Response {
    const since = Date.parse(url.searchParams.get('since') ?? '');
    const perPage = Number(url.searchParams.get('per_page') ?? 30);
    const pageNumber = Number(url.searchParams.get('page') ?? 1);
    const all = this.visible(now, seconds(since) * 1000);
    const page = all.slice((pageNumber - 1) * perPage, pageNumber * perPage);
    const last = Math.max(1, Math.ceil(all.length / perPage));
    const link = (n: number) => {
      const target = new URL(url);
      target.searchParams.set('page', String(n));
      return `<${target}>`;
    };
    const rels = [`${link(1)}; rel="first"`, `${link(last)}; rel="last"`];
    if (pageNumber < last) rels.unshift(`${link(pageNumber + 1)}; rel="next"`);
    if (pageNumber > 1) rels.push(`${link(pageNumber - 1)}; rel="prev"`);
    return Response.json(
      page.map((u) => ({
        id: Number(u.id.replace(/\D/g, '')) || u.id,
        title: `issue ${u.id}`,
        updated_at: isoSeconds(u.at),
      })),
      { headers: { link: rels.join(', ') } },
    );
  }
}

/**
 * Stripe-like list: `created[gte]` / `created[lt]` in unix seconds, newest first, `limit`,
 * `starting_after` = the id of the last object of the previous page, `has_more`.
 */
export class FakeStripe extends FakeApi {
  static readonly origin = 'https://api.stripe.test';

  protected answer(url: URL, now: number): Response {
    const gte = Number(url.searchParams.get('created[gte]')) * 1000;
    const lt = url.searchParams.has('created[lt]')
      ? Number(url.searchParams.get('created[lt]')) * 1000
      : undefined;
    const limit = Number(url.searchParams.get('limit') ?? 10);
    const newestFirst = this.visible(now, gte, lt).reverse();
    const after = url.searchParams.get('starting_after');
    const start = after === null ? 0 : newestFirst.findIndex((u) => u.id === after) + 1;
    const page = newestFirst.slice(start, start + limit);
    return Response.json({
      object: 'list',
      data: page.map((u) => ({
        id: u.id,
        object: 'event',
        created: seconds(u.at),
        type: 'charge.updated',
      })),
      has_more: start + limit < newestFirst.length,
      url: '/v1/events',
    });
  }
}
