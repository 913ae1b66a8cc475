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
import { deletionsSource, listingSource } from '../../src/sources/derived-sources.ts';
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
}) {
  const clock = { now: START };
  const changes: Update[] = [];
  const listingPages: (string | null)[] = [];
  const delivered: DeliveryItem[] = [];
  const hooks: { onPage?: () => void } = {};
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
    reconcile: new ListingReconciler(listing, null),
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
  it('deletes only ids a listing lacked, never more than max_deletes unless two non-empty listings agree', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }), {
          minLength: 1,
          maxLength: 4,
        }),
        async (count, listings) => {
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
          const deleted = new Set<string>();
          let heldIds = new Set<string>();
          for (const shown of listings) {
            const listed = ids.filter((_, i) => shown[i]);
            w.world.listed = listed;
            const live = ids.filter((id) => !deleted.has(id));
            const absent = live.filter((id) => !listed.includes(id));
            const limit = Math.floor((live.length * 30) / 100);
            const before = w.delivered.length;
            w.store.reconciliation.request(w.clock.now);
            await w.engine.runNow();
            w.clock.now += MINUTE;
            const sent = w.delivered.slice(before);
            const deletes = sent
              .filter((item) => item.op === 'delete')
              .map((item) => item.update.id);
            // Two non-empty complete listings that both lacked an id agree on it.
            const agreed = listed.length > 0 ? absent.filter((id) => heldIds.has(id)) : [];
            for (const id of deletes) {
              expect(absent).toContain(id); // lacked by this listing, and live until then
              deleted.add(id);
            }
            const unconfirmed = deletes.filter((id) => !agreed.includes(id));
            expect(unconfirmed.length).toBeLessThanOrEqual(listed.length === 0 ? 0 : limit);
            // An id listed again after its delete comes back (an upsert): live once more.
            for (const item of sent) if (item.op === 'upsert') deleted.delete(item.update.id);
            const held = w.store.reconciliation.state().held !== null;
            // What an empty listing held is agreed with by no later listing.
            const agreeable = held && listed.length > 0;
            heldIds = new Set(agreeable ? absent.filter((id) => !deletes.includes(id)) : []);
          }
        },
      ),
      { numRuns: 60 },
    );
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

/** A paging style's example line in docs/configuration.md (`next = { type = "cursor", … }`) as an object. */
function exampleOf(line: string): unknown {
  const table = line.replace(/^next\s*=\s*/, '');
  const json = table.replace(/(\w+)\s*=/g, '"$1":').replace(/'/g, '"');
  return JSON.parse(json);
}
