import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { MemoryFreshness } from '../../src/engine/memory-freshness.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type {
  DeliveryItem,
  PageResult,
  RunContext,
  Source,
  Update,
} from '../../src/engine/ports.ts';
import { ListingReconciler } from '../../src/engine/reconcile.ts';
import type { FetchById } from '../../src/engine/reconcile-ports.ts';
import { decideDeletes } from '../../src/engine/reconcile-rules.ts';
import { deletionsSource, listingSource } from '../../src/sources/derived-sources.ts';
import { fetchRecordById } from '../../src/sources/fetch-record.ts';
import { pagingStyles } from '../../src/sources/paging/index.ts';

const MINUTE = 60_000;
const START = Date.parse('2026-11-01T00:00:00Z');

function configOf(extra: Record<string, unknown> = {}) {
  const entry = loadPoller(
    'reconciled',
    {
      every: '1m',
      start_from: new Date(START - MINUTE).toISOString(),
      source: {
        url: 'https://api.test/changes',
        from_param: 'since',
        next: { type: 'cursor', param: 'cursor', path: 'next' },
      },
      deliver: { type: 'webhook', url: 'https://receiver.test/', secret: 'a-secret-for-tests' },
      reconcile: { every: '1h', url: 'https://api.test/all', max_deletes: '100%' },
      ...extra,
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  return entry.config;
}

const update = (id: string, at: number): Update => {
  const version = new Date(at).toISOString();
  return { id, version, versionMs: at, record: { id, updated_at: version } };
};

/** A clock, a stream of changes, a listing that costs `pageMs` a page, and a receiver. */
function world(options: {
  listed: string[];
  perPage: number;
  pageMs: number;
  config?: Record<string, unknown>;
  fetchById?: FetchById;
}) {
  const clock = { now: START };
  const changes: Update[] = [];
  const listingPages: (string | null)[] = [];
  const delivered: DeliveryItem[] = [];
  const hooks: {
    onPage?: () => void;
    onListingStart?: () => void;
    /** A page that fails instead (its cursor). */
    fails?: (cursor: string | null) => boolean;
  } = {};
  const listingState = { listed: options.listed };
  const stream: Source = {
    async fetchPage(window) {
      const updates = changes.filter((u) => u.versionMs >= window.from);
      return { ok: true, updates, malformed: [], next: null };
    },
  };
  const listing: Source = {
    async fetchPage(_window, cursor): Promise<PageResult> {
      listingPages.push(cursor);
      if (hooks.fails?.(cursor)) return { ok: false, kind: 'transient', error: 'HTTP 503' };
      if (cursor === null) hooks.onListingStart?.();
      clock.now += options.pageMs;
      hooks.onPage?.();
      const offset = Number(cursor ?? 0);
      const ids = listingState.listed.slice(offset, offset + options.perPage);
      const more = offset + options.perPage < listingState.listed.length;
      return {
        ok: true,
        updates: ids.map((id) => update(id, START - 2 * MINUTE)),
        malformed: [],
        next: more ? String(offset + options.perPage) : null,
      };
    },
  };
  const store = new MemoryStore();
  const freshness = new MemoryFreshness();
  const config = configOf(options.config);
  const ctx: RunContext = {
    poller: 'reconciled',
    config,
    store,
    source: stream,
    deliverer: {
      async deliver(items) {
        delivered.push(...items);
        return { kind: 'delivered' };
      },
    },
    now: () => clock.now,
    random: () => 0.5,
    freshness,
    reconcile: new ListingReconciler(listing, options.fetchById ?? null),
  };
  const engine = new PollerEngine(ctx, { set: async () => {} });
  return {
    clock,
    changes,
    listingPages,
    delivered,
    store,
    freshness,
    engine,
    ctx,
    hooks,
    world: listingState,
  };
}

describe('a reconciliation gives the lease back to the incremental polls', () => {
  it('lists no page past the poller next tick: the run after it polls first, then goes on from the cursor', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `id${String(i).padStart(2, '0')}`);
    const w = world({ listed: ids, perPage: 5, pageMs: 20_000 });
    w.store.state.nextTickAt = START + MINUTE;
    w.store.reconciliation.request(START);

    await w.engine.runNow();

    // Pages of 20 s from START: the third ends past the tick at START + 60 s, and is the last.
    expect(w.listingPages).toEqual([null, '5', '10']);
    expect(w.store.reconciliation.state().listing).toMatchObject({ pages: 3, cursor: '15' });

    w.store.state.nextTickAt = w.clock.now + MINUTE;
    await w.engine.runNow();
    expect(w.listingPages.slice(3, 4)).toEqual(['15']);
  });

  it('lists no page while a nudge waits: the run it wants comes first', async () => {
    const w = world({ listed: ['a', 'b', 'c'], perPage: 1, pageMs: 1_000 });
    w.store.state.nextTickAt = START + 60 * MINUTE;
    w.store.reconciliation.request(START);
    // A nudge comes while the first page is in flight.
    w.hooks.onPage = () => w.freshness.recordNudge('pending', w.clock.now);

    await w.engine.runNow();

    expect(w.listingPages).toEqual([null]);
    expect(w.store.reconciliation.state().listing).toMatchObject({ pages: 1, cursor: '1' });
  });

  it('continues in a fresh invocation when the run budget ends the listing, not the tick', async () => {
    const ids = Array.from({ length: 30 }, (_, i) => `id${i}`);
    const w = world({ listed: ids, perPage: 1, pageMs: 10 });
    w.store.state.nextTickAt = START + 60 * MINUTE;
    w.store.reconciliation.request(START);
    w.ctx.config = { ...w.ctx.config, max_subrequests: 10 };

    const reply = await w.engine.runNow();

    expect(reply).toMatchObject({ outcome: 'ran', run: { outcome: 'continued' } });
    expect(w.store.state.wakeup).toMatchObject({ reason: 'continuation' });
    expect(w.store.reconciliation.state().listing).not.toBeNull();
  });
});

describe('only a complete listing deletes (R16), as a property', () => {
  it('deletes only ids two complete, non-empty listings in a row lacked, and only ids still live', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        async (count, shown, emptyAt) => {
          const ids = Array.from({ length: count }, (_, i) => `id${i}`);
          const w = world({
            listed: [],
            perPage: 7,
            pageMs: 10,
            config: {
              reconcile: { every: '1h', url: 'https://api.test/all', max_deletes: '30%' },
            },
          });
          w.store.state.nextTickAt = START + 24 * 60 * MINUTE;
          for (const id of ids) w.changes.push(update(id, START - 30_000));
          await w.engine.runNow(); // every id delivered once
          w.clock.now += MINUTE;
          // Each listing shows the next of `shown` (the last one again once they run out), and
          // some are empty: a listing's deliveries come after it starts, before the next does.
          const listings: string[][] = [];
          const startsAt: number[] = [];
          w.hooks.onListingStart = () => {
            const at = listings.length;
            const mask = shown[Math.min(at, shown.length - 1)] ?? [];
            const empty = emptyAt[at % emptyAt.length] === true && at % 3 === 2;
            w.world.listed = empty ? [] : ids.filter((_, i) => mask[i]);
            listings.push(w.world.listed);
            startsAt.push(w.delivered.length);
          };
          for (let run = 0; run < shown.length; run += 1) {
            w.store.reconciliation.request(w.clock.now);
            await w.engine.runNow();
            w.clock.now += MINUTE;
          }
          const deleted = new Set<string>();
          w.delivered.forEach((item, index) => {
            if (item.op === 'upsert') {
              deleted.delete(item.update.id);
              return;
            }
            // The listing that completed last before this delivery, and the one before it.
            const last = startsAt.findLastIndex((at) => at <= index);
            const [now, before] = [listings[last], listings[last - 1]];
            expect(before, `a delete of ${item.update.id} on one listing's word`).toBeDefined();
            for (const listing of [now, before]) {
              expect(listing?.length).toBeGreaterThan(0);
              expect(listing).not.toContain(item.update.id);
            }
            expect(deleted.has(item.update.id)).toBe(false); // live until then
            deleted.add(item.update.id);
          });
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('a listing delete is confirmed before it goes out (R16)', () => {
  const ids = ['a', 'b', 'c', 'd', 'e', 'f'];

  /** A world whose ids a–f were delivered once, listed two a page by offset. */
  async function delivered(options: { fetchById?: FetchById; maxDeletes?: string } = {}) {
    const w = world({
      listed: [...ids],
      perPage: 2,
      pageMs: 10,
      config: {
        reconcile: {
          every: '1h',
          url: 'https://api.test/all',
          max_deletes: options.maxDeletes ?? '50%',
        },
      },
      ...(options.fetchById ? { fetchById: options.fetchById } : {}),
    });
    w.store.state.nextTickAt = START + 24 * 60 * MINUTE;
    for (const id of ids) w.changes.push(update(id, START - 30_000));
    await w.engine.runNow();
    w.clock.now += MINUTE;
    return w;
  }
  const deletesOf = (w: { delivered: DeliveryItem[] }) =>
    w.delivered.filter((item) => item.op === 'delete').map((item) => item.update.id);

  /** `a` goes away once page 1 (a, b) is read: page 2 at offset 2 is then (d, e), not (c, d). */
  function deleteOnReadPage(w: Awaited<ReturnType<typeof delivered>>) {
    let pages = 0;
    w.hooks.onPage = () => {
      pages += 1;
      if (pages === 2) w.world.listed = w.world.listed.filter((id) => id !== 'a');
    };
  }

  it('a record skipped by offset paging while one before it went away is not deleted; the one that went away is', async () => {
    const w = await delivered();
    deleteOnReadPage(w);
    w.store.reconciliation.request(w.clock.now);

    await w.engine.runNow();

    // The first listing lacked c (skipped: it moved onto page 1, read already). The second,
    // started at once, lists c again, and is the first to lack a: nothing goes out yet.
    expect(w.listingPages.filter((cursor) => cursor === null)).toHaveLength(2);
    expect(deletesOf(w)).toEqual([]);
    expect(w.store.reconciliation.state().last).toMatchObject({
      deletes: 1,
      outcome: 'unconfirmed',
    });

    // The next listing, at its time, lacks a too: a goes out, c never did.
    w.clock.now += 60 * MINUTE;
    await w.engine.runNow();

    expect(deletesOf(w)).toEqual(['a']);
    expect(w.store.reconciliation.state().last).toMatchObject({ deletes: 1, outcome: 'agreed' });
  });

  it('delivers no delete on one listing: it waits in storage for the next listing, in a later run', async () => {
    const w = await delivered();
    w.world.listed = ['b', 'c', 'd', 'e', 'f']; // a is gone
    w.store.reconciliation.request(w.clock.now);
    // The run ends before the confirming listing's first page: a nudge wants the lease.
    w.hooks.onPage = () => {
      if (w.listingPages.length === 3) w.freshness.recordNudge('pending', w.clock.now);
    };

    await w.engine.runNow();

    expect(deletesOf(w)).toEqual([]);
    // The confirming listing has begun (due at once), with no page read yet.
    expect(w.store.reconciliation.state()).toMatchObject({
      listing: { confirms: true, pages: 0 },
      last: { deletes: 1, outcome: 'unconfirmed' },
    });
    expect([...w.store.reconciliation.changes.values()]).toMatchObject([
      { id: 'a', op: 'delete', awaiting: true },
    ]);

    w.freshness.takeNudge();
    await w.engine.runNow();

    expect(w.listingPages.filter((cursor) => cursor === null)).toHaveLength(2);
    expect(deletesOf(w)).toEqual(['a']);
  });

  it('drops a delete the next listing shows again', async () => {
    const w = await delivered();
    w.world.listed = ['b', 'c', 'd', 'e', 'f'];
    w.hooks.onListingStart = () => {
      // The confirming listing shows a again (the first listing skipped it).
      if (w.listingPages.length > 3) w.world.listed = [...ids];
    };
    w.store.reconciliation.request(w.clock.now);

    await w.engine.runNow();

    expect(deletesOf(w)).toEqual([]);
    expect(w.store.reconciliation.changes.size).toBe(0);
    expect(w.store.reconciliation.state().last).toMatchObject({ deletes: 0 });
  });

  it('leaves what a confirming listing found to the listing after it, at its time', async () => {
    const w = await delivered();
    w.world.listed = ['b', 'c', 'd', 'e', 'f'];
    w.hooks.onListingStart = () => {
      // Between the two listings, b goes away too: the second confirms a and finds b.
      if (w.listingPages.length > 3) w.world.listed = ['c', 'd', 'e', 'f'];
    };
    w.store.reconciliation.request(w.clock.now);

    await w.engine.runNow();

    expect(deletesOf(w)).toEqual(['a']);
    const state = w.store.reconciliation.state();
    expect(state.confirming).toBe(false);
    expect(state.dueAt).toBe((state.last?.startedAt ?? 0) + 60 * MINUTE);
    expect(w.listingPages.filter((cursor) => cursor === null)).toHaveLength(2);
    expect([...w.store.reconciliation.changes.values()]).toMatchObject([
      { id: 'b', op: 'delete', awaiting: true },
    ]);
  });

  it('a confirming listing that starts over after failing pages is still the confirming one', async () => {
    const w = await delivered();
    w.world.listed = ['b', 'c', 'd', 'e', 'f'];
    // The confirming listing's second page fails five times in a row: it starts over.
    let failures = 0;
    w.hooks.fails = (cursor) => {
      const confirming = w.store.reconciliation.state().listing?.confirms === true;
      if (!confirming || cursor !== '2' || failures >= 5) return false;
      failures += 1;
      return true;
    };
    w.hooks.onListingStart = () => {
      if (failures === 5) w.world.listed = ['c', 'd', 'e', 'f']; // b went meanwhile
    };
    w.store.reconciliation.request(w.clock.now);
    await w.engine.runNow();
    // Each failure backs off; the runs after it go on, until the listing started over completes.
    for (let run = 0; run < 8; run += 1) {
      w.clock.now = Math.max(w.clock.now, w.store.reconciliation.state().retryAt ?? 0) + 1;
      await w.engine.runNow();
    }

    // It confirmed a; b, which it found, waits for the listing at its time, not one at once.
    expect(failures).toBe(5);
    expect(deletesOf(w)).toEqual(['a']);
    const state = w.store.reconciliation.state();
    expect(state.dueAt).toBe((state.last?.startedAt ?? 0) + 60 * MINUTE);
    expect(w.listingPages.filter((cursor) => cursor === null)).toHaveLength(3);
  });

  it('with reconcile.fetch, delivers a delete only when the fetch answers gone, and drops one it answers', async () => {
    const asked: string[] = [];
    const live = new Set(ids);
    const w = await delivered({
      fetchById: async (id) => {
        asked.push(id);
        return { ok: true, record: live.has(id) ? { id } : null };
      },
    });
    deleteOnReadPage(w);
    w.hooks.onPage = ((onPage) => () => {
      onPage?.();
      live.delete('a');
    })(w.hooks.onPage);
    w.store.reconciliation.request(w.clock.now);

    await w.engine.runNow();

    // One listing, no second: it lacks c (skipped), which the fetch answers: dropped.
    expect(w.listingPages.filter((cursor) => cursor === null)).toHaveLength(1);
    expect(asked).toEqual(['c']);
    expect(deletesOf(w)).toEqual([]);
    expect(w.store.reconciliation.changes.size).toBe(0);

    // The next listing lacks a, which the fetch answers 404: it goes out.
    w.store.reconciliation.request(w.clock.now);
    await w.engine.runNow();
    expect(asked).toEqual(['c', 'a']);
    expect(deletesOf(w)).toEqual(['a']);
  });

  it('holds a confirmed delete while an update of its id is failing, stored by the main stream, and sends it after that update (R19)', async () => {
    const w = await delivered({ fetchById: async () => ({ ok: true, record: null }) });
    // a changed once more, then went away; the receiver fails that change for now.
    w.changes.push(update('a', w.clock.now - 1_000));
    let failing = true;
    const sent: string[] = [];
    w.ctx.deliverer = {
      deliver: async (items) => {
        if (failing && items.some((item) => item.op === 'upsert' && item.update.id === 'a'))
          return { kind: 'retry', error: 'HTTP 503' };
        sent.push(...items.map((item) => `${item.op} ${item.update.id}`));
        return { kind: 'delivered' };
      },
    };
    w.world.listed = ['b', 'c', 'd', 'e', 'f'];
    w.store.reconciliation.request(w.clock.now);

    await w.engine.runNow();
    expect(sent).toEqual([]);

    failing = false;
    w.clock.now += MINUTE;
    await w.engine.runNow();
    w.clock.now += 60 * MINUTE;
    await w.engine.runNow();
    expect(sent.filter((line) => line.endsWith(' a'))).toEqual(['upsert a', 'delete a']);
  });

  it('with reconcile.fetch, keeps a delete whose fetch failed, and tries it again', async () => {
    let failing = true;
    const w = await delivered({
      fetchById: async () =>
        failing ? { ok: false, error: 'HTTP 503' } : { ok: true, record: null },
    });
    w.world.listed = ['b', 'c', 'd', 'e', 'f'];
    w.store.reconciliation.request(w.clock.now);

    await w.engine.runNow();
    expect(deletesOf(w)).toEqual([]);
    expect(w.store.reconciliation.state().error?.message).toContain('fetch a: HTTP 503');

    failing = false;
    w.clock.now = (w.store.reconciliation.state().retryAt ?? 0) + 1;
    await w.engine.runNow();
    expect(deletesOf(w)).toEqual(['a']);
  });

  it('with reconcile.fetch, still holds deletes above max_deletes, and fetches none of them', async () => {
    const asked: string[] = [];
    const w = await delivered({
      maxDeletes: '1',
      fetchById: async (id) => {
        asked.push(id);
        return { ok: true, record: null };
      },
    });
    w.world.listed = ['c', 'd', 'e', 'f'];
    w.store.reconciliation.request(w.clock.now);

    await w.engine.runNow();

    expect(deletesOf(w)).toEqual([]);
    expect(asked).toEqual([]);
    expect(w.store.reconciliation.state().held).toMatchObject({ deletes: 2 });
  });
});

describe("what becomes of a completed listing's deletes", () => {
  const config = configOf({
    reconcile: { every: '1h', url: 'https://api.test/all', max_deletes: '10%' },
  }).reconcile;
  if (config === undefined) throw new Error('reconcile');
  const listing = {
    ids: 99,
    unreadable: 0,
    deletes: 1,
    alsoHeld: 0,
    alsoAwaiting: 0,
    known: 100,
    held: null,
    fetches: false,
  };

  it.each([
    [
      'one delete, no fetch: it waits for the next listing',
      {},
      { awaits: true, hold: false, outcome: 'unconfirmed' },
    ],
    [
      'one delete, with fetch: out, fetched first',
      { fetches: true },
      { awaits: false, hold: false, outcome: 'delivered' },
    ],
    [
      'one delete a listing before found: confirmed',
      { alsoAwaiting: 1 },
      { confirm: true, awaits: false, fresh: 0, outcome: 'agreed' },
    ],
    [
      'above max_deletes: held, not awaiting',
      { deletes: 11, ids: 89 },
      { hold: true, awaits: false, outcome: 'held' },
    ],
    [
      'a listing with an unreadable record confirms nothing',
      { alsoAwaiting: 1, unreadable: 1 },
      { confirm: false, hold: true, fresh: 1 },
    ],
    [
      'an empty listing confirms nothing',
      { ids: 0, alsoAwaiting: 1 },
      { confirm: false, hold: true },
    ],
  ] as const)('%s', (_, change, expected) => {
    expect(decideDeletes({ ...listing, ...change }, config)).toMatchObject(expected);
  });
});

describe('the endpoints beside the main stream take what they leave out from it', () => {
  it('reads the deletions stream with each paging style as its own, or the main source paging by default', () => {
    for (const style of Object.values(pagingStyles)) {
      const next = (style.config.parse as (v: unknown) => unknown)(
        JSON.parse(JSON.stringify(exampleOf(style.example))),
      );
      const config = configOf({
        source: {
          url: 'https://api.test/changes',
          from_param: 'since',
          deletions: { url: 'https://api.test/deleted', next },
        },
      });
      expect(deletionsSource(config.source)?.next).toEqual(next);
    }
    const inherited = configOf({
      source: {
        url: 'https://api.test/changes',
        from_param: 'since',
        headers: { authorization: 'Bearer x' },
        next: { type: 'link' },
        deletions: { url: 'https://api.test/deleted', deleted_at: 'removed_at' },
      },
    });
    expect(deletionsSource(inherited.source)).toMatchObject({
      url: 'https://api.test/deleted',
      from_param: 'since',
      updated_at: 'removed_at',
      headers: { authorization: 'Bearer x' },
      next: { type: 'link' },
      params: {},
    });
  });

  it('lists with no window start, and reads ids only without reconcile.updated_at', () => {
    const listing = listingSource(configOf());
    expect(listing).toMatchObject({ url: 'https://api.test/all', from_param: '', updated_at: '' });
  });

  it('refuses a deletions stream whose paging cannot work with its order', () => {
    const entry = loadPoller(
      'bad',
      {
        every: '1m',
        source: {
          url: 'https://api.test/changes',
          from_param: 'since',
          deletions: {
            url: 'https://api.test/deleted',
            sorted: 'asc',
            next: { type: 'page', param: 'page' },
          },
        },
        deliver: { type: 'webhook', url: 'https://receiver.test/', secret: 'a-secret-for-tests' },
      },
      {},
    );
    expect(entry.ok).toBe(false);
    if (!entry.ok)
      expect(entry.errors.join(' ')).toContain('source.deletions.sorted: cannot be "asc"');
  });
});

describe('reconcile.fetch puts a listed id into its path, and nowhere else', () => {
  const loadFetch = (fetch: string) =>
    loadPoller(
      'fetching',
      {
        every: '1m',
        source: { url: 'https://api.test/changes', from_param: 'since' },
        deliver: { type: 'webhook', url: 'https://receiver.test/', secret: 'a-secret-for-tests' },
        reconcile: { every: '1h', url: 'https://api.test/all', fetch },
      },
      {},
    );

  it.each([
    ['the host', 'https://{id}.api.test/items'],
    ['the host, behind one in the path', 'https://api.test/items/{id}?then=https://{id}.api.test'],
    ['the query', 'https://api.test/items?id={id}'],
    ['the userinfo', 'https://{id}@api.test/items/1'],
    ['the fragment', 'https://api.test/items/{id}#{id}'],
  ])('refuses {id} in %s, with a message that says why', (_, fetch) => {
    const entry = loadFetch(fetch);
    expect(entry.ok).toBe(false);
    if (!entry.ok) {
      expect(entry.errors.join('\n')).toContain(
        'reconcile.fetch: may hold {id} only in its path (e.g. "https://api.example.com/tickets/{id}"): a listing\'s ids would choose the host',
      );
    }
  });

  it('takes {id} anywhere in the path, more than once', () => {
    expect(loadFetch('https://api.test/items/{id}/full').ok).toBe(true);
    expect(loadFetch('https://api.test/{id}/comments/{id}.json').ok).toBe(true);
  });

  /** The URLs one id makes `reconcile.fetch` ask for. */
  async function asked(template: string, id: string) {
    const urls: string[] = [];
    const byId = fetchRecordById(
      template,
      configOf().source,
      async (request) => {
        urls.push(request.url);
        return new Response('gone', { status: 404 });
      },
      [],
    );
    return { answer: await byId(id), urls };
  }

  it.each([
    ['../x', 'https://api.test/items/..%2Fx/full'],
    ['a/b?c', 'https://api.test/items/a%2Fb%3Fc/full'],
    ['x#y', 'https://api.test/items/x%23y/full'],
    ['@evil.test', 'https://api.test/items/%40evil.test/full'],
    ['%2e%2e', 'https://api.test/items/%252e%252e/full'],
  ])('percent-encodes %s into one path segment', async (id, url) => {
    expect((await asked('https://api.test/items/{id}/full', id)).urls).toEqual([url]);
  });

  it('puts the id into every {id} of the path', async () => {
    const { urls } = await asked('https://api.test/{id}/comments/{id}', 'a b');
    expect(urls).toEqual(['https://api.test/a%20b/comments/a%20b']);
  });

  it.each(['..', '.'])(
    "never asks for an id that is a dot segment (%s): another path's 404 confirms no delete",
    async (id) => {
      const { answer, urls } = await asked('https://api.test/items/{id}', id);
      expect(urls).toEqual([]);
      expect(answer).toMatchObject({ ok: false, unaddressable: true });
    },
  );

  it('drops a listing delete whose id cannot be fetched, with a warning, and goes on', async () => {
    const lines: Record<string, unknown>[] = [];
    const w = world({
      listed: ['b'],
      perPage: 5,
      pageMs: 10,
      fetchById: fetchRecordById(
        'https://api.test/items/{id}',
        configOf().source,
        async () => new Response('gone', { status: 404 }),
        [],
      ),
    });
    w.ctx.log = (line) => lines.push(line);
    w.store.state.nextTickAt = START + 24 * 60 * MINUTE;
    for (const id of ['..', 'b']) w.changes.push(update(id, START - 30_000));
    await w.engine.runNow();
    w.clock.now += MINUTE;
    w.store.reconciliation.request(w.clock.now);

    await w.engine.runNow();

    expect(w.delivered.filter((item) => item.op === 'delete')).toEqual([]);
    expect(w.store.reconciliation.changes.size).toBe(0);
    expect(w.store.reconciliation.state().error).toBeNull();
    expect(lines.find((line) => line.event === 'reconcile_dropped')).toMatchObject({
      level: 'warn',
      op: 'delete',
    });
  });
});

/** A paging style's example line in docs/configuration.md (`next = { type = "cursor", … }`) as an object. */
function exampleOf(line: string): unknown {
  const table = line.replace(/^next\s*=\s*/, '');
  const json = table.replace(/(\w+)\s*=/g, '"$1":').replace(/'/g, '"');
  return JSON.parse(json);
}
