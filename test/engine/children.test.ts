import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { childId } from '../../src/engine/children.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { DeliveryItem } from '../../src/engine/ports.ts';
import { childrenSource } from '../../src/sources/derived-sources.ts';
import { HttpSource } from '../../src/sources/http-source.ts';
import { MINUTE, START, world } from '../support/children-world.ts';
import { type FakeRecord, ITEMS, styleFakes } from '../support/paging-styles.ts';

describe('children per parent record', () => {
  it("delivers each parent's children under <parent>/<child>, naming the parent, and not the parents", async () => {
    const w = world();
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    const b = w.tracker.comment('ACME-1', 'second');
    const c = w.tracker.comment('ACME-1', 'third');
    w.tracker.issue('ACME-2');
    await w.run();
    expect(w.shown()).toEqual([
      `ACME-1/${a} <ACME-1`,
      `ACME-1/${b} <ACME-1`,
      `ACME-1/${c} <ACME-1`,
    ]);
    // Every child page of ACME-1 (offset paging ends at an empty page), then ACME-2's one.
    expect(w.tracker.commentPages()).toEqual(['ACME-1@0', 'ACME-1@2', 'ACME-1@3', 'ACME-2@0']);
    expect(w.store.runs.at(-1)?.childRequests).toBe(4);
    expect(w.store.read().checkpoint).toBeGreaterThan(START);
  });

  it("sends {from} and {to} in the children's params as the parent window's bounds", async () => {
    const w = world({ children: { params: { maxResults: '2', since: '{from}', until: '{to}' } } });
    w.tracker.issue('ACME-1');
    w.tracker.comment('ACME-1', 'first');
    await w.run();
    const search = w.tracker.requests.find((url) => url.pathname === '/search');
    const comments = w.tracker.requests.find((url) => url.pathname.endsWith('/comment'));
    expect(comments?.searchParams.get('since')).toBe(search?.searchParams.get('updated_from'));
    expect(comments?.searchParams.get('since')).toBe(new Date(START).toISOString());
    expect(comments?.searchParams.get('until')).toBe(new Date(START + MINUTE).toISOString());
  });

  it('deliver.changes_only works on children: a child saved again with the same content is not sent', async () => {
    const w = world({
      poller: {
        deliver: {
          type: 'handler',
          name: 'comments',
          changes_only: true,
          changes_ignore: ['updated'],
        },
      },
    });
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    await w.run();
    w.clock.now += MINUTE;
    w.tracker.edit('ACME-1', a, 'first');
    await w.run();
    expect(w.got).toHaveLength(1);
    expect(w.store.runs.at(-1)?.unchanged).toBe(1);
  });

  it('delivers the parents too, each after its children, with deliver_parents', async () => {
    const w = world({ children: { deliver_parents: true } });
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    await w.run();
    expect(w.shown()).toEqual([`ACME-1/${a} <ACME-1`, 'ACME-1']);
  });

  it('a child listed again unchanged when its parent changes is not delivered again', async () => {
    const w = world();
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    await w.run();
    w.clock.now += MINUTE;
    const b = w.tracker.comment('ACME-1', 'second');
    await w.run();
    w.clock.now += MINUTE;
    w.tracker.edit('ACME-1', a, 'first, edited');
    await w.run();
    expect(w.shown()).toEqual([
      `ACME-1/${a} <ACME-1`,
      `ACME-1/${b} <ACME-1`,
      `ACME-1/${a} <ACME-1`,
    ]);
    expect(w.got.at(-1)?.update.record).toMatchObject({ body: 'first, edited' });
  });

  it('without children.updated_at, a child takes its parent version, and an unchanged one is not sent again', async () => {
    const w = world({ children: { updated_at: undefined } });
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    await w.run();
    const first = w.got[0]?.update;
    expect(first?.version).toBe(new Date(START).toISOString());
    w.clock.now += MINUTE;
    w.tracker.comment('ACME-1', 'second');
    await w.run();
    expect(w.shown().filter((line) => line.startsWith(`ACME-1/${a}`))).toHaveLength(1);
    expect(w.got).toHaveLength(2);
  });

  it("a child added in the same second as its parent's stamp, after the parent was listed, is listed by the next window", async () => {
    const w = world({ lag: '1s' });
    w.tracker.seconds = true;
    const T = Date.parse('2026-09-01T00:10:05.500Z');
    w.clock.now = T - 400;
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    w.clock.now = T - MINUTE;
    await w.run(); // at T: lists ACME-1, stamped 00:10:05
    w.clock.now = T + 300;
    const b = w.tracker.comment('ACME-1', 'second'); // the stamp stays 00:10:05
    expect(w.tracker.issues.get('ACME-1')?.updated).toBe(T - 500);
    w.clock.now = T + 300 - MINUTE + 1_000;
    await w.run();
    expect(w.shown()).toEqual([`ACME-1/${a} <ACME-1`, `ACME-1/${b} <ACME-1`]);
    // Listed again once: the window after does not list it a third time.
    const pages = w.tracker.commentPages().length;
    await w.run();
    expect(w.tracker.commentPages().length).toBe(pages);
  });

  it('a budget stop inside a parent continues at the kept child page: none asked again, none skipped, C waits (R1)', async () => {
    // 6 requests a run: the search, then 5 comment pages or deliveries.
    const w = world({ maxSubrequests: 6 });
    w.tracker.issue('ACME-1');
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((body) =>
      w.tracker.comment('ACME-1', body),
    );
    await w.run();
    expect(w.store.read().checkpoint).toBe(START);
    const afterFirst = w.tracker.commentPages();
    for (let i = 0; i < 6 && w.got.length < ids.length; i += 1) await w.run();
    await w.run();
    expect(w.got.map((item) => item.update.id)).toEqual(ids.map((id) => `ACME-1/${id}`));
    const pages = w.tracker.commentPages();
    // Each child page was asked for once (a stop before handling one asks for it again).
    const handled = pages.filter((page, i) => pages.indexOf(page) === i);
    expect(handled).toEqual(['ACME-1@0', 'ACME-1@2', 'ACME-1@4', 'ACME-1@6', 'ACME-1@7']);
    expect(afterFirst.length).toBeGreaterThan(0);
    expect(pages.filter((page) => page === 'ACME-1@0')).toHaveLength(1);
    expect(w.store.read().checkpoint).toBeGreaterThan(START);
  });

  it('a child request answered 404 means the parent went away: no children, and the window commits', async () => {
    const w = world();
    w.tracker.issue('ACME-1');
    w.tracker.failComments = { key: 'ACME-1', status: 404 };
    await w.run();
    expect(w.got).toEqual([]);
    expect(w.store.read().checkpoint).toBeGreaterThan(START);
  });

  it('any other failure of a child request fails the window, and C stays', async () => {
    const w = world();
    w.tracker.issue('ACME-1');
    w.tracker.comment('ACME-1', 'first');
    w.tracker.failComments = { key: 'ACME-1', status: 500 };
    await w.run();
    expect(w.store.read().checkpoint).toBe(START);
    expect(w.store.runs.at(-1)?.error).toContain('children of ACME-1: page 1');
    w.tracker.failComments = null;
    await w.run();
    expect(w.got).toHaveLength(1);
    expect(w.store.read().checkpoint).toBeGreaterThan(START);
  });

  it("a parent without the value its children's URL needs is a dead letter, and the window goes on", async () => {
    const w = world({
      children: { url: 'https://jira.test/issue/{parent.fields.project}/comment' },
    });
    w.tracker.issue('ACME-1');
    await w.run();
    const letters = [...w.store.deadLetters.values()];
    expect(letters).toHaveLength(1);
    expect(letters[0]?.error).toContain('no value at "fields.project"');
    expect(w.store.read().checkpoint).toBeGreaterThan(START);
  });

  it('a parent whose value is an empty string is a dead letter: `/issue//comment` would ask another endpoint', async () => {
    const w = world({
      children: { url: 'https://jira.test/issue/{parent.fields.summary}/comment' },
    });
    w.tracker.issue('ACME-1', '');
    await w.run();
    expect([...w.store.deadLetters.values()][0]?.error).toContain('no value at "fields.summary"');
    expect(w.tracker.commentPages()).toEqual([]);
  });

  it('a failing child is stored with its parent and retried with it (R19)', async () => {
    const w = world();
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    w.receiver.failIds.add(`ACME-1/${a}`);
    await w.run();
    expect([...w.store.failures.values()][0]?.parent).toBe('ACME-1');
    expect(w.store.read().checkpoint).toBeGreaterThan(START);
    w.receiver.failIds.clear();
    await w.run();
    expect(w.shown()).toEqual([`ACME-1/${a} <ACME-1`]);
  });

  it("percent-encodes / and % in a parent's id, so no two parents' children share an id", () => {
    expect(childId('a/b', 'c')).toBe('a%2Fb/c');
    expect(childId('a', 'b/c')).toBe('a/b/c');
    expect(childId('50%', 'x')).toBe('50%25/x');
  });
});

describe('children.deletes', () => {
  const ops = (got: DeliveryItem[]) => got.map((item) => `${item.op} ${item.update.id}`);

  it('a child its parent no longer lists is deleted once a second listing agrees', async () => {
    const w = world({ children: { deletes: true } });
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    const b = w.tracker.comment('ACME-1', 'second');
    await w.run();
    w.clock.now += MINUTE;
    w.tracker.remove('ACME-1', a);
    const before = w.tracker.commentPages().length;
    await w.run();
    expect(ops(w.got)).toEqual([`upsert ACME-1/${a}`, `upsert ACME-1/${b}`, `delete ACME-1/${a}`]);
    const last = w.got.at(-1);
    expect(last?.update.parent).toBe('ACME-1');
    expect(last?.update.record).toBeNull();
    // Listed twice: the listing that missed it, and the one that confirmed it.
    expect(w.tracker.commentPages().slice(before)).toEqual([
      'ACME-1@0',
      'ACME-1@1',
      'ACME-1@0',
      'ACME-1@1',
    ]);
    // Deleted once: the parent's next change does not delete it again.
    w.clock.now += MINUTE;
    w.tracker.comment('ACME-1', 'third');
    await w.run();
    expect(ops(w.got).filter((line) => line.startsWith('delete'))).toHaveLength(1);
  });

  it('a child only the first listing lacks (a shifted offset) is not deleted', async () => {
    const w = world({ children: { deletes: true } });
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    w.tracker.comment('ACME-1', 'second');
    await w.run();
    w.clock.now += MINUTE;
    w.tracker.comment('ACME-1', 'third');
    w.tracker.skipOnce.add(a);
    await w.run();
    expect(ops(w.got).filter((line) => line.startsWith('delete'))).toEqual([]);
  });

  it("a parent's only child deleted is delivered under the default max_deletes (a share allows one)", async () => {
    const w = world({ children: { deletes: true } });
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'only');
    await w.run();
    w.clock.now += MINUTE;
    w.tracker.remove('ACME-1', a);
    await w.run();
    expect(ops(w.got)).toEqual([`upsert ACME-1/${a}`, `delete ACME-1/${a}`]);
  });

  it('more deletes than children.max_deletes are held and audited, not delivered', async () => {
    const w = world({ children: { deletes: true, max_deletes: 1 } });
    w.tracker.issue('ACME-1');
    const ids = ['a', 'b', 'c'].map((body) => w.tracker.comment('ACME-1', body));
    await w.run();
    w.clock.now += MINUTE;
    w.tracker.remove('ACME-1', ids[0] ?? '');
    w.tracker.remove('ACME-1', ids[1] ?? '');
    await w.run();
    expect(ops(w.got).filter((line) => line.startsWith('delete'))).toEqual([]);
    const held = w.store.audit.find((entry) => entry.action === 'children_deletes_held');
    expect(held?.detail).toEqual({
      parent: 'ACME-1',
      count: 2,
      ids: ids.slice(0, 2).map((id) => `ACME-1/${id}`),
    });
    expect(w.store.read().checkpoint).toBeGreaterThan(START + MINUTE);
  });

  it('without children.deletes, a child no longer listed is not deleted', async () => {
    const w = world();
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    await w.run();
    w.clock.now += MINUTE;
    w.tracker.remove('ACME-1', a);
    await w.run();
    expect(ops(w.got)).toEqual([`upsert ACME-1/${a}`]);
  });
});

describe('source.children config', () => {
  const errorsOf = (children: Record<string, unknown>, source: Record<string, unknown> = {}) => {
    const entry = loadPoller(
      'p',
      {
        every: '1m',
        source: { url: 'https://jira.test/search', from_param: 'since', children, ...source },
        deliver: { type: 'handler', name: 'p' },
      },
      {},
    );
    return entry.ok ? [] : entry.errors;
  };

  it('takes a children table whose url names a parent value', () => {
    expect(errorsOf({ url: 'https://jira.test/issue/{parent.key}/comment' })).toEqual([]);
    expect(
      errorsOf({
        url: 'https://jira.test/comments',
        method: 'POST',
        body: { issue: '{parent.id}' },
      }),
    ).toEqual([]);
  });

  it('refuses children on another origin: the source credentials go with them', () => {
    expect(errorsOf({ url: 'https://elsewhere.test/issue/{parent.key}/comment' })).toEqual([
      `poller "p": source.children.url: must be on source.url's origin (https://jira.test): the source's credentials are sent with it`,
    ]);
  });

  it('refuses a parent value in the origin of the children url', () => {
    expect(errorsOf({ url: 'https://{parent.host}/comments' })[0]).toContain(
      'may hold {parent.…} only in its path and query',
    );
  });

  it('refuses children that name no parent value: every parent would list the same', () => {
    expect(errorsOf({ url: 'https://jira.test/comments' })[0]).toContain(
      'names no {parent.<dot path>}',
    );
  });

  it('refuses a body with GET, and children beside resume, deletions or reconcile', () => {
    const url = 'https://jira.test/issue/{parent.key}/comment';
    expect(errorsOf({ url, body: { a: 1 } })[0]).toContain('source.children.method: is "GET"');
    expect(
      errorsOf({ url }, { resume: { path: 'token', param: 't' } }).some((error) =>
        error.includes('source.resume: cannot be set together with source.children'),
      ),
    ).toBe(true);
    expect(
      errorsOf({ url }, { deletions: { url: 'https://jira.test/deleted' } }).some((error) =>
        error.includes('source.deletions: cannot be set together with source.children'),
      ),
    ).toBe(true);
  });
});

describe("a parent's children, with every paging style", () => {
  for (const [type, fake] of Object.entries(styleFakes)) {
    it(`reads every child page with next.type = "${type}", each page once`, async () => {
      const stamp = (i: number) => new Date(START + i * 1000).toISOString();
      const kids: FakeRecord[] = Array.from({ length: 5 }, (_, i) => ({
        id: `c${i + 1}`,
        updated_at: stamp(i + 1),
      }));
      const serveKids = fake.serve(kids, 2);
      const asked: string[] = [];
      const upstream = async (request: Request) => {
        const url = new URL(request.url);
        if (url.pathname === '/parents') {
          return Response.json({ items: [{ id: 'P', updated_at: stamp(1) }] });
        }
        if (url.pathname !== '/parents/P/children') return new Response('no', { status: 400 });
        asked.push(url.search);
        return serveKids(request);
      };
      const entry = loadPoller(
        'p',
        {
          every: '1m',
          start_from: new Date(START).toISOString(),
          source: {
            url: 'https://api.test/parents',
            from_param: 'since',
            items: ITEMS,
            children: {
              url: 'https://api.test/parents/{parent.id}/children',
              items: ITEMS,
              next: fake.next,
            },
          },
          deliver: { type: 'handler', name: 'p' },
        },
        {},
      );
      if (!entry.ok) throw new Error(entry.errors.join('; '));
      const { config } = entry;
      const children = childrenSource(config.source);
      if (children === null) throw new Error('no children');
      const now = () => START + MINUTE;
      const got: string[] = [];
      const store = new MemoryStore();
      const engine = new PollerEngine(
        {
          poller: 'p',
          config,
          store,
          source: new HttpSource(config.source, upstream, [], now),
          children: {
            source: new HttpSource(children, upstream, [], now, { missingIsEmpty: true }),
          },
          deliverer: {
            batch: 1,
            async deliver(items) {
              got.push(...items.map((item) => item.update.id));
              return { kind: 'delivered' as const };
            },
          },
          now,
          random: () => 0.5,
        },
        { set: async () => {} },
      );
      await engine.trigger('manual');
      await engine.onAlarm();
      expect(got).toEqual(kids.map((kid) => `P/${kid.id}`));
      expect(asked).toHaveLength(fake.requests(kids.length, 2));
      expect(new Set(asked).size).toBe(asked.length);
      expect(store.read().checkpoint).toBe(START + MINUTE);
    });
  }
});

describe('a window of children stopped by the budget', () => {
  it('completes over runs: the parents its earlier runs handled are not listed again', async () => {
    // 6 issues of 5 comments: 4 child pages and 5 deliveries each, 55 requests in all, 12 a run.
    const w = world({ maxSubrequests: 12 });
    const ids: string[] = [];
    for (const key of ['ACME-1', 'ACME-2', 'ACME-3', 'ACME-4', 'ACME-5', 'ACME-6']) {
      w.clock.now += 1_000;
      w.tracker.issue(key);
      for (const body of ['a', 'b', 'c', 'd', 'e']) {
        ids.push(`${key}/${w.tracker.comment(key, body)}`);
      }
    }
    for (let run = 0; run < 20 && (w.store.read().checkpoint ?? START) <= START; run += 1) {
      await w.run();
    }
    expect(w.got.map((item) => item.update.id).sort()).toEqual(ids.sort());
    expect(w.store.read().checkpoint).toBeGreaterThan(START);
    const pages = w.tracker.commentPages();
    expect(pages.length - new Set(pages).size).toBeLessThanOrEqual(6);
  });

  it('a listing continued from a kept child page after a budget stop still deletes a child the parent no longer lists', async () => {
    const w = world({ children: { deletes: true } });
    w.tracker.issue('ACME-1');
    const ids = ['a', 'b', 'c', 'd', 'e'].map((body) => w.tracker.comment('ACME-1', body));
    await w.run();
    w.clock.now += MINUTE;
    w.tracker.remove('ACME-1', ids[0] ?? '');
    // The run stops after the search and ACME-1's first child page; the next one continues.
    w.ctx.config.max_subrequests = 2;
    await w.run();
    expect(w.store.childListing?.cursor).toBe('2');
    w.ctx.config.max_subrequests = 1000;
    await w.run();
    expect(w.got.map((item) => `${item.op} ${item.update.id}`).at(-1)).toBe(
      `delete ACME-1/${ids[0]}`,
    );
  });
});
