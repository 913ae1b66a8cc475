import { FakeVendor, type SeenRequest } from './vendor.ts';

const BASE = 'https://graph.microsoft.com/v1.0/users/delta';

/**
 * Microsoft Graph's users delta query (learn.microsoft.com/graph/delta-query-users): the first
 * round is `GET /v1.0/users/delta` with `$select`; each page but the last holds the next one
 * as `@odata.nextLink` (a URL with `$skiptoken=`), the last one `@odata.deltaLink` (a URL with
 * `$deltatoken=`). Both links are requested as they are: they carry the round's state and
 * its `$select`, and no other parameter may go with them. A round from a deltaLink lists the
 * users changed since it; a deleted user comes as `{ id, "@removed": { reason } }` ("changed":
 * soft-deleted, restorable; "deleted": gone for good). A token Graph no longer knows is answered
 * 400 with the error code `syncStateNotFound`. A round is a snapshot: what changes while it
 * pages waits for the next one.
 */
export class FakeGraphUsersDelta extends FakeVendor {
  readonly host = 'graph.microsoft.com';
  override readonly precisionMs = 1;
  /** Tokens handed out before this many changes expired. */
  expiredBefore = 0;
  /** Ids deleted for good; other deletes are soft (restorable: `reason = "changed"`). */
  readonly purged = new Set<string>();

  /** Every token handed out so far expires, as Graph's do after a while. */
  expireTokens(): void {
    this.expiredBefore = this.versions.length + 1;
  }

  /** Whether a request was part of a round from a deltaLink. */
  fromToken(url: URL): boolean {
    const skip = url.searchParams.get('$skiptoken');
    return url.searchParams.has('$deltatoken') || (skip !== null && !skip.endsWith('F'));
  }

  protected answer({ method, url, headers }: SeenRequest): Response {
    this.require(method === 'GET', 'a GET');
    this.require(url.pathname === '/v1.0/users/delta', 'unknown path');
    this.require(headers.get('authorization')?.startsWith('Bearer '), 'an access token');
    const params = [...url.searchParams.keys()];
    const delta = url.searchParams.get('$deltatoken');
    const skip = url.searchParams.get('$skiptoken');
    // A link is requested as Graph wrote it: its token, nothing beside it.
    if (delta !== null || skip !== null) {
      this.require(params.length === 1, 'a nextLink or deltaLink requested with other parameters');
    } else {
      this.require(
        params.every((key) => key === '$select'),
        `unsupported parameters: ${params.join(', ')}`,
      );
    }
    let since: number | null = null;
    let offset = 0;
    let asOf = this.versions.length;
    if (delta !== null) {
      const match = /^D(\d+)$/.exec(delta);
      this.require(match !== null, 'an unknown $deltatoken');
      since = Number(match[1]);
      if (since < this.expiredBefore) {
        return Response.json(
          {
            error: {
              code: 'syncStateNotFound',
              message: 'The sync state generation is not found.',
              innerError: { date: new Date().toISOString() },
            },
          },
          { status: 400 },
        );
      }
    }
    if (skip !== null) {
      // `S<offset>x<changes as of the round's start>x<the round's since, or F: a full round>`.
      const match = /^S(\d+)x(\d+)x(\d+|F)$/.exec(skip);
      this.require(match !== null, 'an unknown $skiptoken');
      offset = Number(match[1]);
      asOf = Number(match[2]);
      since = match[3] === 'F' ? null : Number(match[3]);
    }
    const listed = this.latest(asOf).filter((user) =>
      since === null ? !user.deleted : user.seq >= since,
    );
    const slice = this.slice(listed, offset, this.pageCap);
    return Response.json({
      '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#users(displayName,mail)',
      value: slice.rows.map((user) =>
        user.deleted
          ? {
              id: user.id,
              '@removed': { reason: this.purged.has(user.id) ? 'deleted' : 'changed' },
            }
          : {
              id: user.id,
              displayName: `User ${user.id} (edit ${user.edits})`,
              mail: `user${user.id}@contoso.example`,
            },
      ),
      ...(slice.next === null
        ? { '@odata.deltaLink': `${BASE}?$deltatoken=D${asOf}` }
        : { '@odata.nextLink': `${BASE}?$skiptoken=S${slice.next}x${asOf}x${since ?? 'F'}` }),
    });
  }

  /** Each user's latest version among the first `asOf` changes: its change number and edits. */
  private latest(asOf: number) {
    const latest = new Map<string, { id: string; deleted: boolean; seq: number; edits: number }>();
    for (const [seq, version] of this.versions.slice(0, asOf).entries()) {
      const edits = (latest.get(version.id)?.edits ?? -1) + 1;
      latest.set(version.id, { id: version.id, deleted: version.deleted, seq, edits });
    }
    return [...latest.values()].sort((a, b) => a.id.localeCompare(b.id));
  }
}
