import { FakeVendor, type SeenRequest } from './vendor.ts';

/**
 * Google Calendar's events list by sync token
 * (developers.google.com/workspace/calendar/api/guides/sync): without `syncToken`, a full
 * sync lists every event that is not cancelled; with it, every event changed since (cancelled
 * ones as `status = "cancelled"`), and `syncToken` cannot go with `updatedMin` and the other
 * filters. Each page after the first carries `pageToken` and repeats the round's
 * `syncToken`. The last page holds `nextSyncToken`; a token that expired is answered 410
 * (a full sync is required). A round is a snapshot: what changes while it pages waits for
 * the next one.
 */
export class FakeGoogleCalendarSync extends FakeVendor {
  readonly host = 'www.googleapis.com';
  override readonly precisionMs = 1;
  /** Tokens handed out before this many changes expired (410). */
  expiredBefore = 0;

  /** Every token handed out so far expires, as Google's do after a while. */
  expireTokens(): void {
    this.expiredBefore = this.versions.length + 1;
  }

  /** Whether a request was part of a round from a sync token. */
  fromToken(url: URL): boolean {
    return url.searchParams.has('syncToken');
  }

  protected answer({ method, url, headers }: SeenRequest): Response {
    this.require(method === 'GET', 'a GET');
    this.require(/^\/calendar\/v3\/calendars\/[^/]+\/events$/.test(url.pathname), 'unknown path');
    this.require(headers.get('authorization')?.startsWith('Bearer '), 'an OAuth token');
    const params = url.searchParams;
    const sync = params.get('syncToken');
    for (const filter of ['updatedMin', 'timeMin', 'timeMax', 'orderBy', 'q', 'iCalUID']) {
      this.require(sync === null || !params.has(filter), `syncToken cannot go with ${filter}`);
    }
    const maxResults = Number(params.get('maxResults') ?? 250);
    this.require(maxResults >= 1 && maxResults <= 2500, 'maxResults is 1 to 2500');
    let since: number | null = null;
    if (sync !== null) {
      const match = /^CPDA(\d+)xsyncv1$/.exec(sync);
      this.require(match !== null, 'an unknown syncToken');
      since = Number(match[1]);
      if (since < this.expiredBefore) {
        return Response.json(
          {
            error: {
              code: 410,
              message: 'Sync token is no longer valid, a full sync is required.',
              errors: [{ domain: 'global', reason: 'fullSyncRequired' }],
            },
          },
          { status: 410 },
        );
      }
    }
    // A page token: `c<offset>.<changes as of the round's start>.<the round's syncToken>`.
    let offset = 0;
    let asOf = this.versions.length;
    const page = params.get('pageToken');
    if (page !== null) {
      const match = /^c(\d+)\.(\d+)\.(.*)$/.exec(page);
      this.require(match !== null, 'an unknown pageToken');
      this.require((match[3] ?? '') === (sync ?? ''), 'each page repeats the round’s syncToken');
      offset = Number(match[1]);
      asOf = Number(match[2]);
    }
    const listed = this.latest(asOf).filter((event) =>
      since === null ? !event.deleted : event.seq >= since,
    );
    const slice = this.slice(listed, offset, maxResults);
    return Response.json({
      kind: 'calendar#events',
      items: slice.rows.map((event) => ({
        kind: 'calendar#event',
        id: event.id,
        status: event.deleted ? 'cancelled' : 'confirmed',
        updated: new Date(event.at).toISOString(),
      })),
      ...(slice.next === null
        ? { nextSyncToken: `CPDA${asOf}xsyncv1` }
        : { nextPageToken: `c${slice.next}.${asOf}.${sync ?? ''}` }),
    });
  }

  /** Each event's latest version among the first `asOf` changes, with its change number. */
  private latest(asOf: number) {
    const latest = new Map<string, { id: string; at: number; deleted: boolean; seq: number }>();
    for (const [seq, version] of this.versions.slice(0, asOf).entries()) {
      latest.set(version.id, { ...version, seq });
    }
    return [...latest.values()].sort((a, b) => a.id.localeCompare(b.id));
  }
}
