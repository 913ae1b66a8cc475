import { readGraphQL } from './graphql.ts';
import { FakeVendor, type SeenRequest } from './vendor.ts';

/**
 * Linear's GraphQL API (linear.app/developers/graphql, pagination and filtering):
 * `POST https://api.linear.app/graphql`, a personal API key as the bare `Authorization`
 * header; `issues(first, after, orderBy: updatedAt, filter: { updatedAt: { gte } })`, newest
 * first, `nodes` and `pageInfo { hasNextPage endCursor }`. A bad request is a 200 with
 * `errors` (here: when asked for more than `first: 250`).
 */
export class FakeLinear extends FakeVendor {
  readonly host = 'api.linear.app';
  override readonly precisionMs = 1;
  override readonly idPrefix = 'a4f1c2d3-issue-';

  protected answer(request: SeenRequest): Response {
    this.require(request.url.pathname === '/graphql', 'unknown path');
    const auth = request.headers.get('authorization') ?? '';
    this.require(/^lin_api_/.test(auth), 'a personal API key, without "Bearer"');
    const graphql = readGraphQL(request);
    this.require(typeof graphql !== 'string', String(graphql));
    const { query, variables } = graphql;
    this.require(/issues\s*\(/.test(query), 'an issues query');
    this.require(/orderBy:\s*updatedAt/.test(query), 'orderBy: updatedAt');
    this.require(/updatedAt:\s*\{\s*gte:\s*\$\w+/.test(query), 'filter updatedAt gte a variable');
    this.require(/pageInfo\s*\{[^}]*hasNextPage[^}]*endCursor/.test(query), 'pageInfo asked');
    const since = Object.values(variables).find(
      (value) => typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value),
    );
    this.require(typeof since === 'string', 'the gte variable is an ISO 8601 date');
    const first = Number(/first:\s*(\d+)/.exec(query)?.[1] ?? 50);
    const after = variables.after;
    this.require(after === undefined || typeof after === 'string', '$after is a cursor');
    const newestFirst = this.changed(Date.parse(since)).reverse();
    const page = this.slice(newestFirst, this.offsetOf(after), first);
    return Response.json({
      data: {
        issues: {
          nodes: page.rows.map((v) => ({
            id: `${this.idPrefix}${v.id}`,
            identifier: `ENG-${v.id}`,
            updatedAt: new Date(v.at).toISOString(),
            archivedAt: v.deleted ? new Date(v.at).toISOString() : null,
          })),
          pageInfo: {
            hasNextPage: page.next !== null,
            endCursor: page.next === null ? null : `c${page.next}`,
          },
        },
      },
    });
  }
}
