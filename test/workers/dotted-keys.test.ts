import { beforeEach, describe, expect, it } from 'vitest';
import { api, createPoller } from '../support/fleet.ts';
import { type FakeHost, type FakeReceiver, installFakes } from './fakes.ts';

const MINUTE = 60_000;
const PAGE = 2;

/**
 * A Microsoft Graph shaped listing: `value` holds the records (each with its `@odata.etag`),
 * and `@odata.nextLink`, a key with a dot in it, the full URL of the next page (its
 * `$skiptoken` carries the window and the position), absent on the last page.
 */
class FakeGraph implements FakeHost {
  readonly records: { id: string; lastModifiedDateTime: string }[] = [];
  readonly requests: URL[] = [];

  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.requests.push(url);
    const token = url.searchParams.get('$skiptoken');
    const [since, offset] =
      token === null ? [url.searchParams.get('since'), '0'] : token.split('~');
    const from = Date.parse(since ?? '');
    if (Number.isNaN(from))
      return Response.json({ error: { code: 'BadRequest' } }, { status: 400 });
    const start = Number(offset);
    const matching = this.records.filter(
      (record) => Date.parse(record.lastModifiedDateTime) >= from,
    );
    const value = matching
      .slice(start, start + PAGE)
      .map((record) => ({ '@odata.etag': `W/"${record.id}"`, ...record }));
    const next = start + PAGE < matching.length;
    return Response.json({
      '@odata.context': 'https://upstream.test/v1.0/$metadata#items',
      value,
      ...(next
        ? {
            '@odata.nextLink': `https://upstream.test/v1.0/items?$skiptoken=${since}~${start + PAGE}`,
          }
        : {}),
    });
  }
}

let graph: FakeGraph;
let receiver: FakeReceiver;

beforeEach(() => {
  graph = new FakeGraph();
  ({ receiver } = installFakes({ 'upstream.test': graph }));
});

describe('a path to a key that holds a dot', () => {
  it('pages a Microsoft Graph listing by @odata.nextLink and delivers every record', async () => {
    const at = new Date(Date.now() - 30_000).toISOString();
    for (const id of ['a', 'b', 'c', 'd', 'e'])
      graph.records.push({ id, lastModifiedDateTime: at });
    const name = await createPoller('graph', {
      sinceMs: MINUTE,
      source: {
        url: 'https://upstream.test/v1.0/items',
        from_param: 'since',
        items: 'value',
        updated_at: 'lastModifiedDateTime',
        next: { type: 'url', path: '@odata.nextLink' },
      },
    });

    const reply = (await (await api('POST', `/pollers/${name}/run`)).json()) as {
      run?: { outcome: string };
    };

    expect(reply.run?.outcome).toBe('success');
    expect(receiver.ids().sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    // The first page, then each nextLink as given: positions 2 and 4 of the same window.
    const positions = graph.requests.map(
      (url) => url.searchParams.get('$skiptoken')?.split('~')[1],
    );
    expect(positions).toEqual([undefined, '2', '4']);
    await api('DELETE', `/pollers/${name}`);
  });
});
