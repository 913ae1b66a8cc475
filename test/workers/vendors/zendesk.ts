import { FakeVendor, isoSeconds, type SeenRequest } from './vendor.ts';

/** What the export leaves out: the changes of the last minute. */
const HIDES_MS = 60_000;

/**
 * Zendesk's cursor-based incremental ticket export
 * (developer.zendesk.com/api-reference/ticketing/ticket-management/incremental_exports/):
 * `GET /api/v2/incremental/tickets/cursor.json?start_time=<unix seconds>`, then `?cursor=`
 * as `after_url` says, until `end_of_stream`; oldest first; the last minute left out.
 */
export class FakeZendesk extends FakeVendor {
  readonly host = 'acme.zendesk.com';

  protected answer({ method, url }: SeenRequest): Response {
    this.require(method === 'GET', 'the export is a GET');
    this.require(url.pathname === '/api/v2/incremental/tickets/cursor.json', 'unknown path');
    const cursor = url.searchParams.get('cursor');
    let start: number;
    let offset = 0;
    if (cursor === null) {
      const startTime = url.searchParams.get('start_time') ?? '';
      this.require(/^\d+$/.test(startTime), 'start_time must be unix seconds');
      start = Number(startTime) * 1000;
    } else {
      const [at, from] = cursor.split('.');
      this.require(/^\d+$/.test(at ?? '') && /^\d+$/.test(from ?? ''), 'unknown cursor');
      start = Number(at);
      offset = Number(from);
    }
    const shown = this.changed(start).filter((v) => v.at <= Date.now() - HIDES_MS);
    const page = this.slice(shown, offset, Number(url.searchParams.get('per_page') ?? 1000));
    const after = page.next === null ? null : `${start}.${page.next}`;
    return Response.json({
      tickets: page.rows.map((v) => ({
        id: Number(v.id),
        subject: `ticket ${v.id}`,
        status: v.deleted ? 'deleted' : 'open',
        updated_at: isoSeconds(v.at),
      })),
      after_cursor: after,
      after_url:
        after === null
          ? null
          : `https://${this.host}/api/v2/incremental/tickets/cursor.json?cursor=${after}`,
      before_cursor: null,
      before_url: null,
      end_of_stream: page.next === null,
    });
  }
}
