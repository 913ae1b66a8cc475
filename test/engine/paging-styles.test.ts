import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { PageResult } from '../../src/engine/ports.ts';
import type { Window } from '../../src/engine/window.ts';
import { HttpSource } from '../../src/sources/http-source.ts';
import { type NextType, pagingStyles } from '../../src/sources/paging/index.ts';
import {
  type FakeRecord,
  ITEMS,
  styleFakes,
  type Upstream,
  type Where,
} from '../support/paging-styles.ts';

/**
 * One case suite, run against every paging style of src/sources/paging (as hono runs one
 * router suite against every router): the real HttpSource, page after page, against a fake
 * upstream that speaks the style (test/support/paging-styles.ts).
 */

const FROM = Date.parse('2026-03-01T10:00:00.000Z');
const TO = Date.parse('2026-03-01T11:00:00.000Z');
const window: Window = { from: FROM, to: TO, bounded: true, startedAt: TO, cut: false };

/** `n` records inside the window, oldest first. */
function records(n: number): FakeRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `r${i + 1}`,
    updated_at: new Date(FROM + (i + 1) * 1000).toISOString(),
  }));
}

/**
 * A source with `next`, whose requests go to `upstream` and are kept (`requested`: each as
 * its method, URL and body; `urls`: their URLs). With `where = "body"`, a POST that sends the
 * style's value in its body (`next.in`).
 */
function sourceIn(next: Record<string, unknown>, upstream: Upstream, where: Where) {
  const entry = loadPoller(
    'p',
    {
      cron: '* * * * *',
      source: {
        url: 'https://api.example.com/v1/items',
        from_param: 'since',
        params: { limit: '3' },
        items: ITEMS,
        next: where === 'body' ? { ...next, in: 'body' } : next,
        ...(where === 'body' ? { method: 'POST', body: { filter: 'open' } } : {}),
      },
      deliver: { type: 'handler', name: 'x' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  const requested: string[] = [];
  const urls: string[] = [];
  const http = new HttpSource(
    entry.config.source,
    async (request) => {
      urls.push(request.url);
      requested.push(`${request.method} ${request.url} ${await request.clone().text()}`);
      return upstream(request);
    },
    entry.secrets,
    () => FROM,
  );
  return { http, requested, urls };
}

/** Reads the window page by page as the engine does, up to `limit` pages. */
async function readWindow(http: HttpSource, limit = 20) {
  const pages: PageResult[] = [];
  let cursor: string | null = null;
  do {
    const page = await http.fetchPage(window, cursor);
    pages.push(page);
    if (!page.ok) break;
    cursor = page.next;
  } while (cursor !== null && pages.length < limit);
  const ids = pages.flatMap((page) => (page.ok ? page.updates.map((update) => update.id) : []));
  return { pages, ids, last: pages.at(-1) };
}

/** Whether the style's `source.next` table takes `key` (the last-page paths `stop`, `more`; `in`). */
function takes(type: NextType, key: string, value = 'flag'): boolean {
  const next = { ...styleFakes[type].next, [key]: value };
  return pagingStyles[type].config.safeParse(next).success;
}

/** The upstream's answer with `extra` merged into its JSON body (its Link header kept). */
async function withBody(answer: Response | Promise<Response>, extra: Record<string, unknown>) {
  const response = await answer;
  const body = (await response.json()) as Record<string, unknown>;
  const link = response.headers.get('link');
  return Response.json({ ...body, ...extra }, link === null ? {} : { headers: { link } });
}

it('every paging style has a fake upstream, and every fake a style', () => {
  expect(Object.keys(styleFakes).sort()).toEqual(Object.keys(pagingStyles).sort());
});

it('runs the styles that send a value with it in the body too', () => {
  const sending = (Object.keys(pagingStyles) as NextType[]).filter((type) =>
    places(type).includes('body'),
  );
  expect(sending.sort()).toEqual(['cursor', 'last_id', 'offset', 'page']);
});

/** The places a style's value can go: the body too for the styles that send one (next.in). */
const places = (type: NextType): Where[] =>
  takes(type, 'in', 'body') ? ['query', 'body'] : ['query'];

for (const [type, where] of (Object.keys(pagingStyles) as NextType[]).flatMap((type) =>
  places(type).map((where) => [type, where] as const),
)) {
  const fake = styleFakes[type];
  const sourceFor = (next: Record<string, unknown>, upstream: Upstream) =>
    sourceIn(next, upstream, where);

  describe(`${type} paging${where === 'body' ? ', its value in the body' : ''}`, () => {
    it('pages a multi-page window to its end, reading every record once, in order', async () => {
      const data = records(7);
      const { http, requested } = sourceFor(fake.next, fake.serve(data, 3, where));
      const { pages, ids, last } = await readWindow(http);
      expect(pages.every((page) => page.ok)).toBe(true);
      expect(ids).toEqual(data.map((record) => record.id));
      expect(last).toMatchObject({ ok: true, next: null });
      expect(requested).toHaveLength(fake.requests(7, 3));
    });

    it('reads a window of one short page, and an empty window, to their end', async () => {
      for (const n of [0, 2]) {
        const data = records(n);
        const { http, requested } = sourceFor(fake.next, fake.serve(data, 3, where));
        const { ids, last } = await readWindow(http);
        expect(ids).toEqual(data.map((record) => record.id));
        expect(last).toMatchObject({ ok: true, next: null });
        expect(requested).toHaveLength(fake.requests(n, 3));
      }
    });

    it('never sends the same request twice in a window', async () => {
      const { http, requested } = sourceFor(fake.next, fake.serve(records(10), 2, where));
      await readWindow(http);
      expect(new Set(requested).size).toBe(requested.length);
      expect(requested.length).toBe(fake.requests(10, 2));
    });

    it('asks every page for the window it reads', async () => {
      const { http, urls } = sourceFor(fake.next, fake.serve(records(7), 3, where));
      await readWindow(http);
      for (const url of urls) {
        expect(new URL(url).searchParams.get('since')).toBe(new Date(FROM).toISOString());
      }
    });

    if (fake.requests(7, 3) > 1) {
      it("names, in a failed page's error, the URL it requested", async () => {
        const upstream = fake.serve(records(7), 3, where);
        let calls = 0;
        const { http, urls } = sourceFor(fake.next, (request) =>
          ++calls === 2 ? new Response('down', { status: 503 }) : upstream(request),
        );
        const { last } = await readWindow(http);
        expect(urls).toHaveLength(2);
        expect(last).toMatchObject({ ok: false, kind: 'transient' });
        const method = where === 'body' ? 'POST' : 'GET';
        expect(!last?.ok && last?.error).toContain(`${method} ${urls[1]}: HTTP 503`);
      });
    }

    if (takes(type, 'more')) {
      it('stops where `more` says false, even on a page that offers a way on', async () => {
        const upstream = fake.serve(records(7), 3, where);
        const { http, requested } = sourceFor({ ...fake.next, more: 'has_more' }, (request) =>
          withBody(upstream(request), { has_more: false }),
        );
        expect(await http.fetchPage(window, null)).toMatchObject({ ok: true, next: null });
        expect(requested).toHaveLength(1);
      });
    }

    if (takes(type, 'stop')) {
      it('stops where `stop` says true, even on a page that offers a way on', async () => {
        const upstream = fake.serve(records(7), 3, where);
        const { http } = sourceFor({ ...fake.next, stop: 'done' }, (request) =>
          withBody(upstream(request), { done: true }),
        );
        expect(await http.fetchPage(window, null)).toMatchObject({ ok: true, next: null });
      });
    }

    const withoutWay = 'withoutWay' in fake ? fake.withoutWay : undefined;
    if (withoutWay !== undefined) {
      it('fails a page that says more is coming but gives no way to it, instead of taking it as the last', async () => {
        const { http } = sourceFor(withoutWay.next, () => Response.json(withoutWay.body));
        const page = await http.fetchPage(window, null);
        expect(page).toMatchObject({ ok: false, kind: 'bad_response' });
        expect(!page.ok && page.error).toContain(withoutWay.says);
      });
    }
  });
}
