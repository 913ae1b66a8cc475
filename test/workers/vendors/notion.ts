import { FakeVendor, record, type SeenRequest } from './vendor.ts';

/**
 * Notion's database query (developers.notion.com/reference/post-database-query):
 * `POST /v1/databases/{id}/query` with a `last_edited_time` timestamp filter
 * (`on_or_after` an ISO 8601 date), ascending `sorts`, `page_size` (at most 100) and
 * `start_cursor` (absent on the first page); `Notion-Version` required. Answers `results`,
 * `has_more`, `next_cursor`. `last_edited_time` is rounded down to the minute.
 */
export class FakeNotion extends FakeVendor {
  readonly host = 'api.notion.com';
  override readonly precisionMs = 60_000;
  override readonly idPrefix = '5c6a28216bb14a7eb6e1c50111d4b1';

  protected answer({ method, url, body, headers }: SeenRequest): Response {
    this.require(method === 'POST', 'query is a POST');
    this.require(/^\/v1\/databases\/[\w-]+\/query$/.test(url.pathname), 'unknown path');
    this.require(headers.get('notion-version') === '2022-06-28', 'Notion-Version: 2022-06-28');
    this.require(headers.get('authorization')?.startsWith('Bearer '), 'an integration token');
    const query = record(body);
    this.require(query, 'a JSON object body');
    const filter = record(query.filter);
    this.require(filter?.timestamp === 'last_edited_time', 'a last_edited_time filter');
    const since = record(filter.last_edited_time)?.on_or_after;
    this.require(
      typeof since === 'string' && !Number.isNaN(Date.parse(since)) && /^\d{4}-/.test(since),
      'on_or_after is an ISO 8601 date',
    );
    const sorts = query.sorts;
    this.require(
      Array.isArray(sorts) &&
        record(sorts[0])?.timestamp === 'last_edited_time' &&
        record(sorts[0])?.direction === 'ascending',
      'sorted by last_edited_time, ascending',
    );
    const size = query.page_size ?? 100;
    this.require(typeof size === 'number' && size >= 1 && size <= 100, 'page_size 1 to 100');
    const cursor = query.start_cursor;
    this.require(cursor === undefined || typeof cursor === 'string', 'start_cursor a string');
    const page = this.slice(this.changed(Date.parse(since)), this.offsetOf(cursor), size);
    return Response.json({
      object: 'list',
      results: page.rows.map((v) => ({
        object: 'page',
        id: `${this.idPrefix}${v.id}`,
        last_edited_time: new Date(v.at).toISOString(),
        archived: v.deleted,
        in_trash: v.deleted,
      })),
      next_cursor: page.next === null ? null : `c${page.next}`,
      has_more: page.next !== null,
      type: 'page_or_database',
    });
  }
}
