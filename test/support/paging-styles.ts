import type { NextType } from '../../src/sources/paging/index.ts';

/**
 * A fake upstream for each paging style, for the shared case suite
 * (test/engine/paging-styles.test.ts). Each one speaks its style strictly: a request that
 * does not page the way the style says (a missing or wrong parameter) gets a 400, so a
 * style whose URLs drift fails the suite instead of re-reading its first page.
 */

/** A record as every fake serves it. */
export interface FakeRecord {
  id: string;
  updated_at: string;
}

/** Answers one request. */
export type Upstream = (request: Request) => Response | Promise<Response>;

/** Where a style sends its value: `next.in`. */
export type Where = 'query' | 'body';

/**
 * What a request sent as the style's value, read where `where` says: a query parameter, or a
 * top-level key of a POST's JSON body (as text). A value in the other place is refused, so a
 * style that sends it to the wrong place fails the suite.
 */
async function sentValues(
  request: Request,
  where: Where,
  names: string[],
): Promise<{ get(name: string): string | null } | Response> {
  const url = new URL(request.url);
  if (where === 'query') {
    if (request.method !== 'GET') return bad(`expected a GET, got a ${request.method}`);
    return url.searchParams;
  }
  if (request.method !== 'POST') return bad(`expected a POST, got a ${request.method}`);
  if (request.headers.get('content-type') !== 'application/json') return bad('not JSON');
  const body = (await request.json()) as Record<string, unknown>;
  for (const name of names) if (url.searchParams.has(name)) return bad(`${name} in the query`);
  return {
    get: (name) => {
      const value = body[name];
      return value === undefined || value === null ? null : String(value);
    },
  };
}

/** What the suite needs to run its cases against one style. */
export interface StyleFake {
  /** `source.next` for this style, as written in the config. */
  next: Record<string, unknown>;
  /**
   * The upstream: `records` in pages of `size`, reached the way this style reaches them, its
   * value read from the query or the body (`where`, for the styles that send one: next.in).
   */
  serve(records: FakeRecord[], size: number, where?: Where): Upstream;
  /** Requests it takes to read `n` records `size` at a time, the one that says "the end" included. */
  requests(n: number, size: number): number;
  /**
   * A page that says more is coming but gives no way to the next one, and what the error
   * says: absent for styles that always have a way on (`page`) or cannot say more (`none`).
   */
  withoutWay?: { next: Record<string, unknown>; body: unknown; says: string };
}

/** `source.items` of every fake: the records sit at `items` in the body. */
export const ITEMS = 'items';

const pages = (n: number, size: number) => Math.max(1, Math.ceil(n / size));
/** Styles that end on an empty page ask once more after the last record. */
const pagesThenEmpty = (n: number, size: number) => Math.ceil(n / size) + 1;

const bad = (why: string) => Response.json({ error: why }, { status: 400 });

/** A whole number parameter, or undefined when it is absent or not one. */
function whole(params: { get(name: string): string | null }, name: string): number | undefined {
  const text = params.get(name);
  if (text === null || !/^\d+$/.test(text)) return undefined;
  return Number(text);
}

/** The same URL with one query parameter set. */
function withParam(url: URL, name: string, value: string): string {
  const next = new URL(url);
  next.searchParams.set(name, value);
  return next.toString();
}

export const styleFakes = {
  cursor: {
    next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
    serve:
      (records, size, where = 'query') =>
      async (request) => {
        const sent = await sentValues(request, where, ['cursor']);
        if (sent instanceof Response) return sent;
        const cursor = sent.get('cursor');
        const start = cursor === null ? 0 : Number(/^k(\d+)$/.exec(cursor)?.[1] ?? Number.NaN);
        if (Number.isNaN(start)) return bad(`unknown cursor ${cursor}`);
        const end = start + size;
        return Response.json({
          items: records.slice(start, end),
          next_cursor: end < records.length ? `k${end}` : null,
        });
      },
    requests: pages,
    withoutWay: {
      next: { type: 'cursor', param: 'c', path: 'next', more: 'has_more' },
      body: { items: [{ id: 1, updated_at: 1 }], next: null, has_more: true },
      says: '"has_more" is true but the next cursor at "next" is null',
    },
  },
  url: {
    // Zendesk: an absolute next_page, and end_of_stream on the last page.
    next: { type: 'url', path: 'next_page', stop: 'end_of_stream' },
    serve: (records, size) => (request) => {
      const url = new URL(request.url);
      const after = url.searchParams.has('after') ? whole(url.searchParams, 'after') : 0;
      if (after === undefined) return bad('after is not a number');
      const end = after + size;
      return Response.json({
        items: records.slice(after, end),
        next_page: withParam(url, 'after', String(end)),
        end_of_stream: end >= records.length,
      });
    },
    requests: pages,
    withoutWay: {
      next: { type: 'url', path: 'next_page', stop: 'end_of_stream' },
      body: { items: [{ id: 1, updated_at: 1 }], next_page: '', end_of_stream: false },
      says: '"end_of_stream" is false but the next page URL at "next_page" is ""',
    },
  },
  link: {
    // GitHub: numbered pages behind a Link header, rel="next" absent on the last one.
    next: { type: 'link' },
    serve: (records, size) => (request) => {
      const url = new URL(request.url);
      const page = url.searchParams.has('page') ? whole(url.searchParams, 'page') : 1;
      if (page === undefined || page < 1) return bad('page is not a page number');
      const start = (page - 1) * size;
      const last = pages(records.length, size);
      const links = [`<${withParam(url, 'page', String(last))}>; rel="last"`];
      if (page < last) links.unshift(`<${withParam(url, 'page', String(page + 1))}>; rel="next"`);
      return Response.json(
        { items: records.slice(start, start + size) },
        { headers: { link: links.join(', ') } },
      );
    },
    requests: pages,
    withoutWay: {
      next: { type: 'link', more: 'has_more' },
      body: { items: [{ id: 1, updated_at: 1 }], has_more: true },
      says: '"has_more" is true but the Link header has no rel="next"',
    },
  },
  page: {
    next: { type: 'page', param: 'page' },
    serve:
      (records, size, where = 'query') =>
      async (request) => {
        const sent = await sentValues(request, where, ['page']);
        if (sent instanceof Response) return sent;
        const page = whole(sent, 'page');
        if (page === undefined || page < 1) return bad('page is required, from 1');
        const start = (page - 1) * size;
        return Response.json({ items: records.slice(start, start + size) });
      },
    requests: pagesThenEmpty,
  },
  last_id: {
    // Stripe: starting_after = the last id read, while has_more.
    next: { type: 'last_id', param: 'starting_after', more: 'has_more' },
    serve:
      (records, size, where = 'query') =>
      async (request) => {
        const sent = await sentValues(request, where, ['starting_after']);
        if (sent instanceof Response) return sent;
        const after = sent.get('starting_after');
        const start = after === null ? 0 : records.findIndex((record) => record.id === after) + 1;
        if (start === 0 && after !== null) return bad(`no record ${after}`);
        const end = start + size;
        return Response.json({ items: records.slice(start, end), has_more: end < records.length });
      },
    requests: pages,
    withoutWay: {
      next: { type: 'last_id', param: 'starting_after', more: 'has_more' },
      body: { items: [{ updated_at: 1 }], has_more: true },
      says: '"has_more" is true but the last record\'s id at "id" is missing',
    },
  },
  offset: {
    // offset + limit (json-server's _start + _limit): the records already read, from 0.
    next: { type: 'offset', param: 'offset' },
    serve:
      (records, size, where = 'query') =>
      async (request) => {
        const sent = await sentValues(request, where, ['offset']);
        if (sent instanceof Response) return sent;
        const offset = whole(sent, 'offset');
        if (offset === undefined) return bad('offset is required, from 0');
        return Response.json({ items: records.slice(offset, offset + size) });
      },
    requests: pagesThenEmpty,
    withoutWay: {
      next: { type: 'offset', param: 'offset', more: 'has_more' },
      body: { items: [], has_more: true },
      says: '"has_more" is true but the page is empty, so the offset cannot move on',
    },
  },
  none: {
    next: { type: 'none' },
    serve: (records) => () => Response.json({ items: records }),
    requests: () => 1,
  },
} satisfies Record<NextType, StyleFake>;
