import { FakeVendor, isoSeconds, type SeenRequest } from './vendor.ts';

/**
 * Pipedrive API v2 deals (developers.pipedrive.com/docs/api/v1/Deals#getDeals, v2):
 * `GET /api/v2/deals?updated_since=<RFC 3339>&sort_by=update_time&sort_direction=asc
 * &limit=…&cursor=…`, the key in the `x-api-token` header; `data`,
 * `additional_data.next_cursor`.
 */
export class FakePipedrive extends FakeVendor {
  readonly host = 'acme.pipedrive.com';

  protected answer({ method, url, headers }: SeenRequest): Response {
    this.require(method === 'GET', 'a GET');
    this.require(url.pathname === '/api/v2/deals', 'unknown path');
    this.require(headers.get('x-api-token'), 'the API token in x-api-token');
    const since = url.searchParams.get('updated_since') ?? '';
    this.require(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(since),
      'updated_since is RFC 3339 in whole seconds (2025-01-01T10:20:00Z)',
    );
    const until = url.searchParams.get('updated_until');
    this.require(
      until === null || /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(until),
      'updated_until is RFC 3339 in whole seconds',
    );
    this.require(url.searchParams.get('sort_by') === 'update_time', 'sort_by=update_time');
    this.require(url.searchParams.get('sort_direction') === 'asc', 'sort_direction=asc');
    const limit = Number(url.searchParams.get('limit') ?? 100);
    this.require(limit >= 1 && limit <= 500, 'limit is 1 to 500');
    const page = this.slice(
      this.changed(Date.parse(since), until === null ? undefined : Date.parse(until)),
      this.offsetOf(url.searchParams.get('cursor')),
      limit,
    );
    return Response.json({
      success: true,
      data: page.rows.map((v) => ({
        id: Number(v.id),
        title: `deal ${v.id}`,
        is_deleted: v.deleted,
        update_time: isoSeconds(v.at),
      })),
      additional_data: { next_cursor: page.next === null ? null : `c${page.next}` },
    });
  }
}
