/**
 * Fakes of upstreams that take the window in a POST body, each refusing (400) a request
 * whose method, headers or body differ from what its vendor documents: a config that drifts
 * from the vendor's shape fails its test instead of reading records it should not.
 * Reusable by any test (engine or workerd): each is a `handle(request)` and a store of records.
 */

/** One version of a record in a fake: its id and when it was last modified (epoch ms). */
export interface SearchRecord {
  id: string;
  at: number;
}

/** What every fake here keeps: its records, what it answered, and what it refused and why. */
abstract class SearchApi {
  readonly records: SearchRecord[] = [];
  /** Every request's JSON body, as received (refused ones too). */
  readonly bodies: unknown[] = [];
  /** Why each refused request was refused. */
  readonly refusals: string[] = [];

  add(id: string, at: number): void {
    this.records.push({ id, at });
  }

  async handle(request: Request): Promise<Response> {
    const problem = this.requestProblem(request);
    let body: unknown;
    try {
      body = problem === null ? await request.json() : undefined;
    } catch {
      return this.refuse('the body is not JSON');
    }
    if (problem !== null) return this.refuse(problem);
    this.bodies.push(body);
    const answer = this.answer(body);
    return typeof answer === 'string' ? this.refuse(answer) : Response.json(answer);
  }

  /** Oldest first, from `from` (inclusive) to `to` (exclusive). */
  protected between(from: number, to = Number.POSITIVE_INFINITY): SearchRecord[] {
    return this.records
      .filter((record) => record.at >= from && record.at < to)
      .sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
  }

  private refuse(why: string): Response {
    this.refusals.push(why);
    return Response.json({ status: 'error', message: why }, { status: 400 });
  }

  /** Why the method, URL or headers are not the vendor's, or null. */
  protected abstract requestProblem(request: Request): string | null;
  /** The page for a request body, or why the body is not the vendor's. */
  protected abstract answer(body: unknown): unknown;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The problem of a POST with a JSON body to `path`, or null. */
function postProblem(request: Request, path: string): string | null {
  if (request.method !== 'POST') return `expected POST, got ${request.method}`;
  const url = new URL(request.url);
  if (url.pathname !== path) return `expected ${path}, got ${url.pathname}`;
  if (url.search !== '') return `expected no query, got ${url.search}`;
  if (request.headers.get('content-type') !== 'application/json') {
    return 'expected Content-Type: application/json';
  }
  return null;
}

/**
 * HubSpot CRM v3 search (`POST /crm/v3/objects/contacts/search`): one filter group whose
 * filters are `hs_lastmodifieddate` `GTE` the window start (and optionally `LT` its end), as
 * epoch milliseconds (JSON numbers), sorted ascending; `limit`; the cursor `after` from the
 * last page's `paging.next.after`, absent on the first page.
 */
export class FakeHubSpotSearch extends SearchApi {
  static readonly origin = 'https://api.hubapi.test';
  static readonly path = '/crm/v3/objects/contacts/search';

  protected requestProblem(request: Request): string | null {
    return postProblem(request, FakeHubSpotSearch.path);
  }

  protected answer(body: unknown): unknown {
    if (!isObject(body)) return 'the body is not an object';
    const groups = body.filterGroups;
    if (!Array.isArray(groups) || groups.length !== 1 || !isObject(groups[0])) {
      return 'filterGroups must hold one group';
    }
    const filters = groups[0].filters;
    if (!Array.isArray(filters)) return 'filterGroups[0].filters is not an array';
    let from: number | undefined;
    let to: number | undefined;
    for (const filter of filters) {
      if (!isObject(filter) || filter.propertyName !== 'hs_lastmodifieddate') {
        return 'a filter is not on hs_lastmodifieddate';
      }
      if (typeof filter.value !== 'number') return 'a filter value is not a number (epoch ms)';
      if (filter.operator === 'GTE') from = filter.value;
      else if (filter.operator === 'LT') to = filter.value;
      else return `unexpected operator ${String(filter.operator)}`;
    }
    if (from === undefined) return 'no GTE filter on hs_lastmodifieddate';
    const sorts = body.sorts;
    if (
      !Array.isArray(sorts) ||
      !isObject(sorts[0]) ||
      sorts[0].propertyName !== 'hs_lastmodifieddate' ||
      sorts[0].direction !== 'ASCENDING'
    ) {
      return 'sorts must be hs_lastmodifieddate ASCENDING';
    }
    if (typeof body.limit !== 'number' || body.limit < 1 || body.limit > 200) {
      return 'limit must be a number from 1 to 200';
    }
    if ('after' in body && (typeof body.after !== 'string' || !/^\d+$/.test(body.after))) {
      return `after must be a cursor this API gave, got ${JSON.stringify(body.after)}`;
    }
    const start = body.after === undefined ? 0 : Number(body.after);
    const all = this.between(from, to);
    const page = all.slice(start, start + body.limit);
    const end = start + page.length;
    return {
      total: all.length,
      results: page.map((record) => ({
        id: record.id,
        properties: {
          hs_object_id: record.id,
          hs_lastmodifieddate: new Date(record.at).toISOString(),
        },
        updatedAt: new Date(record.at).toISOString(),
        archived: false,
      })),
      ...(end < all.length ? { paging: { next: { after: String(end), link: '?after=' } } } : {}),
    };
  }
}

/**
 * Notion database query (`POST /v1/databases/{id}/query`, with a `Notion-Version` header):
 * `filter = { timestamp = "last_edited_time", last_edited_time = { on_or_after = <ISO> } }`,
 * sorted by `last_edited_time` ascending, `page_size`, and `start_cursor` from the last
 * page's `next_cursor` (absent on the first page) while `has_more`.
 */
export class FakeNotionQuery extends SearchApi {
  static readonly origin = 'https://api.notion.test';
  static readonly database = 'd9824bdc84454327be8b5b47500af6ce';
  static readonly path = `/v1/databases/${FakeNotionQuery.database}/query`;
  /** The cursors this fake handed out, each to the index of the next record. */
  private readonly cursors = new Map<string, number>();

  protected requestProblem(request: Request): string | null {
    if (request.headers.get('notion-version') !== '2022-06-28') {
      return 'expected the Notion-Version header';
    }
    return postProblem(request, FakeNotionQuery.path);
  }

  protected answer(body: unknown): unknown {
    if (!isObject(body) || !isObject(body.filter)) return 'filter is not an object';
    const { filter } = body;
    if (filter.timestamp !== 'last_edited_time') return 'filter.timestamp is not last_edited_time';
    const condition = filter.last_edited_time;
    if (!isObject(condition) || typeof condition.on_or_after !== 'string') {
      return 'filter.last_edited_time.on_or_after is not a string';
    }
    const from = Date.parse(condition.on_or_after);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(condition.on_or_after) || Number.isNaN(from)) {
      return `on_or_after is not an ISO 8601 date: ${condition.on_or_after}`;
    }
    const sorts = body.sorts;
    if (
      !Array.isArray(sorts) ||
      !isObject(sorts[0]) ||
      sorts[0].timestamp !== 'last_edited_time' ||
      sorts[0].direction !== 'ascending'
    ) {
      return 'sorts must be last_edited_time ascending';
    }
    const size = body.page_size;
    if (typeof size !== 'number' || size < 1 || size > 100) return 'page_size is 1 to 100';
    let start = 0;
    if ('start_cursor' in body) {
      const known =
        typeof body.start_cursor === 'string' ? this.cursors.get(body.start_cursor) : undefined;
      if (known === undefined) return `unknown start_cursor ${JSON.stringify(body.start_cursor)}`;
      start = known;
    }
    const all = this.between(from);
    const page = all.slice(start, start + size);
    const end = start + page.length;
    const more = end < all.length;
    const cursor = more ? crypto.randomUUID() : null;
    if (cursor !== null) this.cursors.set(cursor, end);
    return {
      object: 'list',
      results: page.map((record) => ({
        object: 'page',
        id: record.id,
        last_edited_time: new Date(record.at).toISOString(),
      })),
      next_cursor: cursor,
      has_more: more,
      type: 'page_or_database',
    };
  }
}

/** `source` of a poller on FakeHubSpotSearch: the window in the body, as unix_ms numbers. */
export const hubspotSearchSource = {
  url: `${FakeHubSpotSearch.origin}${FakeHubSpotSearch.path}`,
  method: 'POST',
  time_format: 'unix_ms',
  body: {
    filterGroups: [
      {
        filters: [
          { propertyName: 'hs_lastmodifieddate', operator: 'GTE', value: '{from}' },
          { propertyName: 'hs_lastmodifieddate', operator: 'LT', value: '{to}' },
        ],
      },
    ],
    sorts: [{ propertyName: 'hs_lastmodifieddate', direction: 'ASCENDING' }],
    limit: 3,
  },
  items: 'results',
  updated_at: 'properties.hs_lastmodifieddate',
  sorted: 'asc',
  headers: { Authorization: 'Bearer ${UPSTREAM_TOKEN}' },
  next: { type: 'cursor', in: 'body', param: 'after', path: 'paging.next.after' },
};

/** `source` of a poller on FakeNotionQuery: the window start an ISO string in the filter. */
export const notionQuerySource = {
  url: `${FakeNotionQuery.origin}${FakeNotionQuery.path}`,
  method: 'POST',
  body: {
    filter: { timestamp: 'last_edited_time', last_edited_time: { on_or_after: '{from}' } },
    sorts: [{ timestamp: 'last_edited_time', direction: 'ascending' }],
    page_size: 3,
  },
  items: 'results',
  updated_at: 'last_edited_time',
  sorted: 'asc',
  headers: { Authorization: 'Bearer ${UPSTREAM_TOKEN}', 'Notion-Version': '2022-06-28' },
  next: {
    type: 'cursor',
    in: 'body',
    param: 'start_cursor',
    path: 'next_cursor',
    more: 'has_more',
  },
};
