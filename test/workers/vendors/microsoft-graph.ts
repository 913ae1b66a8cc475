import { FakeVendor, type SeenRequest } from './vendor.ts';

const FILTER = /^lastModifiedDateTime ge (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/;

/**
 * Microsoft Graph mail messages (learn.microsoft.com/graph/api/user-list-messages, OData
 * query parameters): `GET /v1.0/me/messages?$filter=lastModifiedDateTime ge <unquoted
 * DateTimeOffset>&$orderby=lastModifiedDateTime&$top=…`; `value`, and the next page as a
 * full URL in `@odata.nextLink`.
 */
export class FakeMicrosoftGraph extends FakeVendor {
  readonly host = 'graph.microsoft.com';
  override readonly idPrefix = 'AAMkAGI2';

  protected answer({ method, url, headers }: SeenRequest): Response {
    this.require(method === 'GET', 'a GET');
    this.require(url.pathname === '/v1.0/me/messages', 'unknown path');
    this.require(headers.get('authorization')?.startsWith('Bearer '), 'an access token');
    const filter = FILTER.exec(url.searchParams.get('$filter') ?? '');
    this.require(filter, `invalid $filter: ${url.searchParams.get('$filter')}`);
    this.require(
      url.searchParams.get('$orderby') === 'lastModifiedDateTime',
      '$orderby the filtered property first',
    );
    const top = Number(url.searchParams.get('$top') ?? 10);
    this.require(top >= 1 && top <= 1000, '$top 1 to 1000');
    const page = this.slice(
      this.changed(Date.parse(filter[1] ?? '')),
      Number(url.searchParams.get('$skip') ?? 0),
      top,
    );
    const next = new URL(url);
    next.searchParams.set('$skip', String(page.next));
    return Response.json({
      '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#users/messages',
      value: page.rows.map((v) => ({
        id: `${this.idPrefix}${v.id}`,
        subject: `message ${v.id}`,
        lastModifiedDateTime: new Date(Math.floor(v.at / 1000) * 1000)
          .toISOString()
          .replace('.000', ''),
      })),
      ...(page.next === null ? {} : { '@odata.nextLink': next.toString() }),
    });
  }
}
