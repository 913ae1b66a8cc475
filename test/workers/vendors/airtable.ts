import { FakeVendor, type SeenRequest } from './vendor.ts';

const FORMULA = /^IS_AFTER\(\{Last Modified\}, '(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{3})?Z)'\)$/;

/**
 * Airtable's list records (airtable.com/developers/web/api/list-records): `GET
 * /v0/{baseId}/{table}?filterByFormula=…&sort[0][field]=…&pageSize=…&offset=…`; a "Last
 * modified time" field named `Last Modified`, filtered with `IS_AFTER` (strictly after);
 * `records` and `offset` while more remain.
 */
export class FakeAirtable extends FakeVendor {
  readonly host = 'api.airtable.com';
  override readonly idPrefix = 'rec';

  protected answer({ method, url, headers }: SeenRequest): Response {
    this.require(method === 'GET', 'a GET');
    this.require(/^\/v0\/app\w+\/[^/]+$/.test(url.pathname), 'unknown path');
    this.require(headers.get('authorization')?.startsWith('Bearer pat'), 'a personal access token');
    const formula = FORMULA.exec(url.searchParams.get('filterByFormula') ?? '');
    this.require(formula, `INVALID_FILTER_BY_FORMULA: ${url.searchParams.get('filterByFormula')}`);
    this.require(url.searchParams.get('sort[0][field]') === 'Last Modified', 'sort by it');
    const size = Number(url.searchParams.get('pageSize') ?? 100);
    this.require(size >= 1 && size <= 100, 'pageSize 1 to 100');
    const after = Date.parse(formula[1] ?? '');
    const page = this.slice(
      this.changed(after, undefined, true),
      this.offsetOf(url.searchParams.get('offset')),
      size,
    );
    return Response.json({
      records: page.rows.map((v) => ({
        id: `${this.idPrefix}${v.id}`,
        createdTime: '2026-01-01T00:00:00.000Z',
        fields: { Name: `task ${v.id}`, 'Last Modified': new Date(v.at).toISOString() },
      })),
      ...(page.next === null ? {} : { offset: `c${page.next}` }),
    });
  }
}
