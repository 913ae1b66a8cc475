import { graphQLErrors, readGraphQL } from './graphql.ts';
import { FakeVendor, type SeenRequest } from './vendor.ts';

/**
 * Shopify's GraphQL Admin API (shopify.dev/docs/api/admin-graphql, `orders` query and search
 * syntax): `POST /admin/api/2025-01/graphql.json` with `X-Shopify-Access-Token`;
 * `orders(first, after, sortKey: UPDATED_AT, query: "updated_at:>='<ISO 8601>'")`, `edges {
 * cursor node }` and `pageInfo`. Throttled requests are a 200 with `errors` whose code is
 * THROTTLED (`throttleNext()`).
 */
export class FakeShopify extends FakeVendor {
  readonly host = 'acme.myshopify.com';
  override readonly idPrefix = 'gid://shopify/Order/';
  private throttled = 0;

  /** The next `times` requests are throttled, as Shopify's leaky bucket does. */
  throttleNext(times = 1): void {
    this.throttled += times;
  }

  protected answer(request: SeenRequest): Response {
    this.require(request.url.pathname === '/admin/api/2025-01/graphql.json', 'unknown path');
    this.require(request.headers.get('x-shopify-access-token'), 'X-Shopify-Access-Token');
    const graphql = readGraphQL(request);
    this.require(typeof graphql !== 'string', String(graphql));
    const { query, variables } = graphql;
    if (this.throttled > 0) {
      this.throttled -= 1;
      return graphQLErrors('Throttled', 'THROTTLED');
    }
    this.require(/orders\s*\(/.test(query), 'an orders query');
    this.require(/sortKey:\s*UPDATED_AT/.test(query), 'sortKey: UPDATED_AT');
    const search = Object.values(variables).find((value) => typeof value === 'string');
    const since = /^updated_at:>='(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)'$/.exec(String(search));
    this.require(since, `search "updated_at:>='2026-01-01T00:00:00Z'", got ${String(search)}`);
    const first = Number(/first:\s*(\d+)/.exec(query)?.[1] ?? 0);
    this.require(first >= 1 && first <= 250, 'first: 1 to 250');
    const after = Object.entries(variables).find(([name]) => name === 'cursor')?.[1];
    this.require(after === undefined || typeof after === 'string', '$cursor is a cursor');
    const page = this.slice(this.changed(Date.parse(since[1] ?? '')), this.offsetOf(after), first);
    return Response.json({
      data: {
        orders: {
          edges: page.rows.map((v, i) => ({
            cursor: `c${i}`,
            node: {
              id: `${this.idPrefix}${v.id}`,
              updatedAt: new Date(Math.floor(v.at / 1000) * 1000).toISOString().replace('.000', ''),
              cancelledAt: v.deleted ? new Date(v.at).toISOString() : null,
            },
          })),
          pageInfo: {
            hasNextPage: page.next !== null,
            endCursor: page.next === null ? null : `c${page.next}`,
          },
        },
      },
      extensions: { cost: { requestedQueryCost: 12 } },
    });
  }
}
