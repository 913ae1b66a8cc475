import { FakeVendor, record, type SeenRequest } from './vendor.ts';

/**
 * Intercom's conversation search (developers.intercom.com/docs/references/rest-api/api.intercom.io/conversations/searchconversations):
 * `POST /conversations/search` with `query` `{ field: "updated_at", operator: ">", value:
 * <unix seconds> }` (strictly after) and `pagination` `{ per_page ≤ 150, starting_after }`;
 * `Intercom-Version` header. Answers `conversations` and `pages.next.starting_after`.
 */
export class FakeIntercom extends FakeVendor {
  readonly host = 'api.intercom.io';

  protected answer({ method, url, body, headers }: SeenRequest): Response {
    this.require(method === 'POST', 'search is a POST');
    this.require(url.pathname === '/conversations/search', 'unknown path');
    this.require(headers.get('intercom-version'), 'an Intercom-Version header');
    this.require(headers.get('authorization')?.startsWith('Bearer '), 'an access token');
    const search = record(body);
    const query = record(search?.query);
    this.require(query?.field === 'updated_at' && query.operator === '>', 'updated_at > value');
    this.require(
      typeof query.value === 'number' && Number.isInteger(query.value),
      `value is unix seconds, got ${JSON.stringify(query.value)}`,
    );
    const pagination = record(search?.pagination) ?? {};
    const perPage = pagination.per_page ?? 20;
    this.require(typeof perPage === 'number' && perPage >= 1 && perPage <= 150, 'per_page ≤ 150');
    const after = pagination.starting_after;
    this.require(after === undefined || typeof after === 'string', 'starting_after a string');
    const matching = this.changed(query.value * 1000 + 999, undefined, true);
    const page = this.slice(matching, this.offsetOf(after), perPage);
    return Response.json({
      type: 'conversation.list',
      total_count: matching.length,
      conversations: page.rows.map((v) => ({
        type: 'conversation',
        id: v.id,
        state: v.deleted ? 'closed' : 'open',
        updated_at: Math.floor(v.at / 1000),
      })),
      pages: {
        type: 'pages',
        per_page: perPage,
        ...(page.next === null ? {} : { next: { starting_after: `c${page.next}` } }),
      },
    });
  }
}
