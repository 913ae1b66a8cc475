import { FakeVendor, type SeenRequest } from './vendor.ts';

/**
 * Google Calendar's events list (developers.google.com/workspace/calendar/api/v3/reference/events/list):
 * `GET /calendar/v3/calendars/{calendarId}/events?updatedMin=<RFC 3339>&showDeleted=true
 * &maxResults=…&pageToken=…`; `items`, `nextPageToken`; a deleted event is listed with
 * `status = "cancelled"`. `updated` carries milliseconds.
 */
export class FakeGoogleCalendar extends FakeVendor {
  readonly host = 'www.googleapis.com';
  override readonly precisionMs = 1;

  protected answer({ method, url, headers }: SeenRequest): Response {
    this.require(method === 'GET', 'a GET');
    this.require(/^\/calendar\/v3\/calendars\/[^/]+\/events$/.test(url.pathname), 'unknown path');
    this.require(headers.get('authorization')?.startsWith('Bearer '), 'an OAuth token');
    const updatedMin = url.searchParams.get('updatedMin') ?? '';
    this.require(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(updatedMin),
      'updatedMin is an RFC 3339 timestamp with a time zone offset',
    );
    this.require(url.searchParams.get('showDeleted') === 'true', 'showDeleted=true lists deletes');
    this.require(!url.searchParams.has('orderBy'), 'orderBy=updated is the default for this use');
    const maxResults = Number(url.searchParams.get('maxResults') ?? 250);
    this.require(maxResults >= 1 && maxResults <= 2500, 'maxResults is 1 to 2500');
    const page = this.slice(
      this.changed(Date.parse(updatedMin)),
      this.offsetOf(url.searchParams.get('pageToken')),
      maxResults,
    );
    return Response.json({
      kind: 'calendar#events',
      items: page.rows.map((v) => ({
        kind: 'calendar#event',
        id: v.id,
        status: v.deleted ? 'cancelled' : 'confirmed',
        updated: new Date(v.at).toISOString(),
      })),
      ...(page.next === null ? { nextSyncToken: 'sync' } : { nextPageToken: `c${page.next}` }),
    });
  }
}
