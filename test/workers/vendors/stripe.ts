import { FakeVendor, type SeenRequest } from './vendor.ts';

/**
 * Stripe's events (docs.stripe.com/api/events/list): `GET /v1/events?created[gte]=<unix>
 * &created[lt]=<unix>&limit=…&starting_after=<id>`, newest first, `has_more`.
 */
export class FakeStripe extends FakeVendor {
  readonly host = 'api.stripe.com';

  protected answer({ method, url, headers }: SeenRequest): Response {
    this.require(method === 'GET', 'a GET');
    this.require(url.pathname === '/v1/events', 'unknown path');
    this.require(headers.get('authorization')?.startsWith('Bearer sk_'), 'a secret key');
    const gte = url.searchParams.get('created[gte]') ?? '';
    const lt = url.searchParams.get('created[lt]');
    this.require(/^\d+$/.test(gte), 'created[gte] is unix seconds');
    this.require(lt === null || /^\d+$/.test(lt), 'created[lt] is unix seconds');
    const limit = Number(url.searchParams.get('limit') ?? 10);
    this.require(limit >= 1 && limit <= 100, 'limit is 1 to 100');
    const newestFirst = this.changed(
      Number(gte) * 1000,
      lt === null ? undefined : Number(lt) * 1000,
    ).reverse();
    const after = url.searchParams.get('starting_after');
    const start = after === null ? 0 : newestFirst.findIndex((v) => v.id === after) + 1;
    this.require(after === null || start > 0, 'starting_after names an object of the list');
    const page = this.slice(newestFirst, start, limit);
    return Response.json({
      object: 'list',
      url: '/v1/events',
      data: page.rows.map((v) => ({
        id: v.id,
        object: 'event',
        type: 'charge.updated',
        created: Math.floor(v.at / 1000),
      })),
      has_more: page.next !== null,
    });
  }
}
