import { FakeVendor, isoSeconds, type SeenRequest } from './vendor.ts';

/**
 * GitHub's repository issues (docs.github.com/en/rest/issues/issues#list-repository-issues):
 * `GET /repos/{owner}/{repo}/issues?since=<ISO 8601>&state=all&sort=updated&direction=…`,
 * numbered pages in the `Link` header; `since` is inclusive, stamps in whole seconds.
 */
export class FakeGitHub extends FakeVendor {
  readonly host = 'api.github.com';

  protected answer({ method, url, headers }: SeenRequest): Response {
    this.require(method === 'GET', 'a GET');
    this.require(/^\/repos\/[^/]+\/[^/]+\/issues$/.test(url.pathname), 'unknown path');
    this.require(headers.get('authorization')?.startsWith('Bearer '), 'no token');
    const since = url.searchParams.get('since') ?? '';
    this.require(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(since),
      'since is ISO 8601 as YYYY-MM-DDTHH:MM:SSZ',
    );
    this.require(url.searchParams.get('state') === 'all', 'closed issues change too: state=all');
    this.require(url.searchParams.get('sort') === 'updated', 'sort=updated');
    const direction = url.searchParams.get('direction') ?? 'desc';
    this.require(direction === 'asc' || direction === 'desc', 'direction is asc or desc');
    const perPage = Number(url.searchParams.get('per_page') ?? 30);
    this.require(perPage >= 1 && perPage <= 100, 'per_page is 1 to 100');
    const number = Number(url.searchParams.get('page') ?? 1);
    const listed = this.changed(Math.floor(Date.parse(since) / 1000) * 1000);
    if (direction === 'desc') listed.reverse();
    const size = Math.min(perPage, this.pageCap);
    const page = listed.slice((number - 1) * size, number * size);
    const link = (n: number) => {
      const target = new URL(url);
      target.searchParams.set('page', String(n));
      return `<${target}>`;
    };
    const last = Math.max(1, Math.ceil(listed.length / size));
    const rels = [`${link(last)}; rel="last"`];
    if (number < last) rels.unshift(`${link(number + 1)}; rel="next"`);
    return Response.json(
      page.map((v) => ({
        id: Number(v.id),
        title: `issue ${v.id}`,
        state: 'open',
        updated_at: isoSeconds(v.at),
      })),
      { headers: { link: rels.join(', ') } },
    );
  }
}
