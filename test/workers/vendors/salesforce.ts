import { FakeVendor, type SeenRequest } from './vendor.ts';

/** SOQL's datetime literal: whole seconds in UTC, unquoted. */
const LITERAL = '(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ)';
const WINDOW = new RegExp(
  `^SELECT Id, Name, SystemModstamp, IsDeleted FROM Account WHERE SystemModstamp >= ${LITERAL} AND SystemModstamp < ${LITERAL} ORDER BY SystemModstamp ASC$`,
);

/** Salesforce's stamp: `2026-01-01T10:00:00.000+0000`. */
const stamp = (ms: number) => new Date(ms).toISOString().replace('Z', '+0000');

/**
 * Salesforce's REST query (developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_queryall.htm):
 * `GET /services/data/v62.0/queryAll?q=<SOQL>` (queryAll lists deleted records too, with
 * `IsDeleted = true`); a datetime literal is unquoted whole seconds. Answers `records`,
 * `done` and a relative `nextRecordsUrl` while not done.
 */
export class FakeSalesforce extends FakeVendor {
  readonly host = 'acme.my.salesforce.com';
  override readonly idPrefix = '001';
  private readonly queries = new Map<string, { from: number; to: number }>();

  protected answer({ method, url, headers }: SeenRequest): Response {
    this.require(method === 'GET', 'a GET');
    this.require(headers.get('authorization')?.startsWith('Bearer '), 'an access token');
    let from: number;
    let to: number;
    let offset = 0;
    const more = /^\/services\/data\/v62\.0\/query\/(\w+)-(\d+)$/.exec(url.pathname);
    if (more) {
      const query = this.queries.get(more[1] ?? '');
      this.require(query, 'an unknown query locator');
      ({ from, to } = query);
      offset = Number(more[2]);
    } else {
      this.require(url.pathname === '/services/data/v62.0/queryAll', 'unknown path');
      const soql = WINDOW.exec(url.searchParams.get('q') ?? '');
      this.require(soql, `MALFORMED_QUERY: ${url.searchParams.get('q')}`);
      from = Date.parse(soql[1] ?? '');
      to = Date.parse(soql[2] ?? '');
    }
    const page = this.slice(this.changed(from, to), offset);
    const locator = `01g${this.queries.size}`;
    if (page.next !== null) this.queries.set(locator, { from, to });
    return Response.json({
      totalSize: this.changed(from, to).length,
      done: page.next === null,
      ...(page.next === null
        ? {}
        : { nextRecordsUrl: `/services/data/v62.0/query/${locator}-${page.next}` }),
      records: page.rows.map((v) => ({
        attributes: { type: 'Account', url: `/services/data/v62.0/sobjects/Account/${v.id}` },
        Id: `${this.idPrefix}${v.id}`,
        Name: `account ${v.id}`,
        SystemModstamp: stamp(v.at),
        IsDeleted: v.deleted,
      })),
    });
  }
}
