import { beforeEach, describe, expect, it } from 'vitest';
import { FakeHubSpotSearch, FakeNotionQuery } from '../support/search-apis.ts';
import { type FakeReceiver, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

/**
 * Upstreams that take the window and the cursor in a POST body, through a real poller:
 * `source.method`, `source.body` with `{from}` / `{to}`, and `next.in = "body"`.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

let hubspot: FakeHubSpotSearch;
let notion: FakeNotionQuery;
let receiver: FakeReceiver;

beforeEach(() => {
  hubspot = new FakeHubSpotSearch();
  notion = new FakeNotionQuery();
  ({ receiver } = installFakes({ 'api.hubapi.test': hubspot, 'api.notion.test': notion }));
});

/** A request whose body is `body` as JSON, with `headers`. */
function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return new Request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

describe('a HubSpot CRM search: the window as epoch ms numbers in filterGroups, the cursor `after` in the body', () => {
  const url = `${FakeHubSpotSearch.origin}${FakeHubSpotSearch.path}`;

  it('delivers every record of a multi-page window, each page a POST the fake accepts', async () => {
    const poller = newPoller('hubspot_search');
    const start = Date.now() - 2 * HOUR;
    await poller.setCheckpoint(start);
    const ids = ['1', '2', '3', '4', '5', '6', '7'];
    for (const [index, id] of ids.entries()) hubspot.add(id, start + (index + 1) * MINUTE);
    hubspot.add('before', start - MINUTE);

    await poller.tick();

    expect(hubspot.refusals).toEqual([]);
    expect(receiver.ids().sort()).toEqual(ids);
    expect((await poller.status()).last_run).toMatchObject({ outcome: 'success', pages: 3 });
    // The first page has no cursor; the next ones carry the one the page before gave.
    expect(hubspot.bodies.map((body) => (body as { after?: string }).after)).toEqual([
      undefined,
      '3',
      '6',
    ]);
    const filters = (hubspot.bodies[0] as { filterGroups: { filters: { value: unknown }[] }[] })
      .filterGroups[0]?.filters;
    expect(filters?.[0]?.value).toBe(start);
    expect(typeof filters?.[1]?.value).toBe('number');
  });

  it('cuts a backlog into max_window windows with the end sent as {to}', async () => {
    const poller = newPoller('hubspot_search');
    const start = Date.now() - 3 * DAY;
    await poller.setCheckpoint(start);
    hubspot.add('old', start + HOUR);
    hubspot.add('new', Date.now() - HOUR);

    await poller.tick();

    expect(hubspot.refusals).toEqual([]);
    expect(receiver.ids().sort()).toEqual(['new', 'old']);
    const windows = hubspot.bodies.map(
      (body) =>
        (body as { filterGroups: { filters: { value: number }[] }[] }).filterGroups[0]?.filters,
    );
    expect(windows.length).toBeGreaterThanOrEqual(3);
    for (const filters of windows) {
      const [gte, lt] = [filters?.[0]?.value ?? 0, filters?.[1]?.value ?? 0];
      expect(lt - gte).toBeLessThanOrEqual(DAY);
    }
  });

  it('is a fake that refuses a GET, a window start as a string, and a cursor in the query', async () => {
    const body = {
      filterGroups: [
        { filters: [{ propertyName: 'hs_lastmodifieddate', operator: 'GTE', value: 1 }] },
      ],
      sorts: [{ propertyName: 'hs_lastmodifieddate', direction: 'ASCENDING' }],
      limit: 3,
    };
    expect((await hubspot.handle(post(url, body))).status).toBe(200);
    expect((await hubspot.handle(new Request(`${url}?hs_lastmodifieddate=1`))).status).toBe(400);
    const asString = structuredClone(body);
    (asString.filterGroups[0]?.filters[0] as { value: unknown }).value = '1';
    expect((await hubspot.handle(post(url, asString))).status).toBe(400);
    expect((await hubspot.handle(post(`${url}?after=3`, body))).status).toBe(400);
    expect(hubspot.refusals).toHaveLength(3);
  });
});

describe('a Notion database query: on_or_after {from} in the filter, start_cursor in the body', () => {
  const url = `${FakeNotionQuery.origin}${FakeNotionQuery.path}`;
  const headers = { 'notion-version': '2022-06-28' };

  it('delivers every record of a multi-page window, each page a POST the fake accepts', async () => {
    const poller = newPoller('notion_query');
    const start = Date.now() - 2 * HOUR;
    await poller.setCheckpoint(start);
    const ids = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8'];
    for (const [index, id] of ids.entries()) notion.add(id, start + (index + 1) * MINUTE);

    await poller.tick();

    expect(notion.refusals).toEqual([]);
    expect(receiver.ids().sort()).toEqual(ids);
    expect((await poller.status()).last_run).toMatchObject({ outcome: 'success', pages: 3 });
    const first = notion.bodies[0] as {
      filter: { last_edited_time: { on_or_after: string } };
      start_cursor?: string;
    };
    expect(first.filter.last_edited_time.on_or_after).toBe(new Date(start).toISOString());
    expect('start_cursor' in first).toBe(false);
    expect(notion.bodies.slice(1).every((body) => 'start_cursor' in (body as object))).toBe(true);
  });

  it('is a fake that refuses a GET, a missing Notion-Version, an unknown cursor and a bad filter', async () => {
    const body = {
      filter: {
        timestamp: 'last_edited_time',
        last_edited_time: { on_or_after: '2026-01-01T00:00:00.000Z' },
      },
      sorts: [{ timestamp: 'last_edited_time', direction: 'ascending' }],
      page_size: 3,
    };
    expect((await notion.handle(post(url, body, headers))).status).toBe(200);
    expect((await notion.handle(new Request(url, { headers }))).status).toBe(400);
    expect((await notion.handle(post(url, body))).status).toBe(400);
    expect((await notion.handle(post(url, { ...body, start_cursor: 'x' }, headers))).status).toBe(
      400,
    );
    const since = { ...body, filter: { ...body.filter, last_edited_time: { after: '2026' } } };
    expect((await notion.handle(post(url, since, headers))).status).toBe(400);
    expect(notion.refusals).toHaveLength(4);
  });
});
