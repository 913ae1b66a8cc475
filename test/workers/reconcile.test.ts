import { beforeEach, describe, expect, it } from 'vitest';
import type { PollerStatus } from '../../src/poller/status.ts';
import { api, createPoller, objectOf } from '../support/fleet.ts';
import { FakeSaas } from './fake-saas.ts';
import { type FakeReceiver, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let saas: FakeSaas;
let receiver: FakeReceiver;

beforeEach(() => {
  saas = new FakeSaas();
  ({ receiver } = installFakes({ 'upstream.test': saas }));
});

/** A runtime poller of the fake SaaS with a reconciliation listing `/v1/all`. */
function withListing(prefix: string, reconcile: Record<string, unknown> = {}, extra = {}) {
  return createPoller(prefix, {
    sinceMs: 10 * MINUTE,
    reconcile: {
      every: '1d',
      url: 'https://upstream.test/v1/all',
      items: 'sessions',
      ...reconcile,
    },
    ...extra,
  });
}

/** Asks for a listing now, as an admin would, and waits for the run it triggers to end. */
async function reconcileNow(name: string) {
  const reply = await api('POST', `/pollers/${name}/reconcile`);
  expect(reply.status).toBe(202);
  await newPoller(name, name).settle();
}

/**
 * A manual run, and whatever it set going (or a run that held the lease instead: the
 * poller's own first tick) brought to rest, so what follows sees its deliveries.
 */
async function runToRest(name: string) {
  const reply = await objectOf(name).runNow();
  await newPoller(name, name).settle();
  return reply;
}

const status = async (name: string) =>
  (await (await api('GET', `/status/${name}`)).json()) as PollerStatus;
const seen = () => receiver.deliveries.map((d) => [d.id, d.op]);

describe('reconciliation (reconcile)', () => {
  it('delivers an id delivered before, absent from a complete listing, as a delete', async () => {
    saas.put('a', Date.now() - 5 * MINUTE);
    saas.put('b', Date.now() - 4 * MINUTE);
    const name = await withListing('reconcile-delete', { max_deletes: '50%' });
    await runToRest(name);
    saas.remove('b'); // vanishes: no tombstone, no deletions stream

    await reconcileNow(name);

    expect(seen()).toEqual([
      ['a', 'upsert'],
      ['b', 'upsert'],
      ['b', 'delete'],
    ]);
    const deleted = receiver.deliveries.at(-1);
    expect(deleted?.key).toMatch(/:b:.*:deleted:\d+$/);
    // Versioned by the version last delivered of it: a receiver keeping the newest takes it.
    expect(deleted?.version).toBe(receiver.deliveries[1]?.version);
    expect(JSON.parse(deleted?.body ?? '{}')).toMatchObject({ op: 'delete', record: null });
    // Two listings: the first found it, the second (at once) confirmed it.
    expect(saas.asked('/v1/all').map((url) => url.searchParams.get('cursor'))).toEqual([
      null,
      null,
    ]);
    const view = (await status(name)).reconcile;
    expect(view?.last_listing).toMatchObject({
      ids: 1,
      deletes: 1,
      upserts: 0,
      outcome: 'agreed',
    });
    expect(view?.held).toBeNull();
    expect(view?.unconfirmed).toBe(0);
    await api('DELETE', `/pollers/${name}`);
  });

  it('delivers a version newer than delivered that the stream never showed, and an id it never delivered, as upserts', async () => {
    saas.put('late', Date.now() - 50 * MINUTE, { title: 'old' });
    const name = await createPoller('reconcile-upsert', {
      sinceMs: 60 * MINUTE,
      reconcile: {
        every: '1d',
        url: 'https://upstream.test/v1/all',
        items: 'sessions',
        updated_at: 'updated_at',
      },
    });
    await runToRest(name);
    // Written late, stamped before the checkpoint: past lag_allowance, the stream cannot show it.
    saas.put('late', Date.now() - 40 * MINUTE, { title: 'new' });
    // A bulk import with old timestamps: never in any window.
    saas.put('imported', Date.now() - 55 * MINUTE, { title: 'imported' });

    await reconcileNow(name);

    expect(seen()).toEqual([
      ['late', 'upsert'],
      ['imported', 'upsert'],
      ['late', 'upsert'],
    ]);
    const body = JSON.parse(receiver.deliveries.at(-1)?.body ?? '{}') as {
      record: { title: string };
    };
    expect(body.record.title).toBe('new');
    expect(receiver.deliveries.at(-1)?.key).toMatch(/:listed:[0-9a-f]{14}$/);
    expect((await status(name)).reconcile?.last_listing).toMatchObject({ upserts: 2, deletes: 0 });
    await api('DELETE', `/pollers/${name}`);
  });

  it('finds a change made without a new updated_at when it compares content, and only then', async () => {
    saas.put('same-stamp', Date.now() - 5 * MINUTE, { title: 'before' });
    const byContent = await withListing('reconcile-content', { compare: 'content' });
    const byStamp = await withListing('reconcile-stamp');
    await runToRest(byContent);
    await runToRest(byStamp);
    saas.silentlyChange('same-stamp', { title: 'after' });

    await reconcileNow(byContent);
    await reconcileNow(byStamp);

    const titles = receiver.deliveries.map(
      (d) => JSON.parse(d.body) as { poller: string; record: { title: string } },
    );
    expect(titles.map((t) => [t.poller, t.record.title])).toEqual([
      [byContent, 'before'],
      [byStamp, 'before'],
      [byContent, 'after'],
    ]);
    // A second listing finds nothing more: what it delivered is remembered.
    await reconcileNow(byContent);
    expect(receiver.deliveries).toHaveLength(3);
    await api('DELETE', `/pollers/${byContent}`);
    await api('DELETE', `/pollers/${byStamp}`);
  });

  it('fetches an upsert by id with reconcile.fetch, and skips one that is gone by then', async () => {
    const name = await withListing('reconcile-fetch', {
      fetch: 'https://upstream.test/v1/sessions/{id}',
    });
    await runToRest(name);
    saas.put('old-one', Date.now() - 60 * MINUTE, { full: true });
    saas.put('vanishing', Date.now() - 60 * MINUTE);
    saas.respondOnce('/v1/sessions/vanishing', () => new Response('gone', { status: 404 }));

    await reconcileNow(name);

    expect(seen()).toEqual([['old-one', 'upsert']]);
    expect(saas.asked('/v1/sessions/old-one')).toHaveLength(1);
    await api('DELETE', `/pollers/${name}`);
  });

  it('holds deletes above max_deletes: none delivered, a warning, a /healthz alert; a confirm delivers them', async () => {
    for (const id of ['a', 'b', 'c', 'd']) saas.put(id, Date.now() - 5 * MINUTE);
    const name = await withListing('reconcile-hold', { max_deletes: '25%' });
    await runToRest(name);
    saas.remove('b');
    saas.remove('c');

    await reconcileNow(name);

    expect(seen().filter(([, op]) => op === 'delete')).toEqual([]);
    const held = await status(name);
    expect(held.reconcile?.held).toMatchObject({ deletes: 2, known_ids: 4 });
    expect(held.warnings.join(' ')).toContain('reconcile held 2 deletes');
    expect(held.alerts.join(' ')).toContain(`POST /pollers/${name}/reconcile/confirm`);
    expect(held.reconcile?.last_listing?.outcome).toBe('held');
    const health = (await (await api('GET', '/healthz')).json()) as {
      at_fault: string[];
      reasons: Record<string, string[]>;
    };
    expect(health.at_fault).toContain(name);
    expect(health.reasons[name]?.[0]).toContain('reconcile held 2 deletes');

    const confirm = await api('POST', `/pollers/${name}/reconcile/confirm`);
    expect(confirm.status).toBe(202);
    expect(await confirm.json()).toMatchObject({ outcome: 'confirmed', deletes: 2 });
    await runToRest(name);

    expect(seen().filter(([, op]) => op === 'delete')).toEqual([
      ['b', 'delete'],
      ['c', 'delete'],
    ]);
    expect((await status(name)).reconcile?.held).toBeNull();
    await api('DELETE', `/pollers/${name}`);
  });

  it('delivers held deletes when a second complete listing finds the same ones', async () => {
    for (const id of ['a', 'b', 'c']) saas.put(id, Date.now() - 5 * MINUTE);
    const name = await withListing('reconcile-agree', { max_deletes: 1 });
    await runToRest(name);
    saas.remove('a');
    saas.remove('b');

    await reconcileNow(name); // held: 2 > 1
    expect(seen().filter(([, op]) => op === 'delete')).toEqual([]);
    const held = (await status(name)).reconcile;
    // The next listing comes at its time (every), not at once; an admin may ask for it.
    expect(Date.parse(held?.next_listing_at ?? '')).toBeGreaterThan(Date.now() + 23 * 60 * MINUTE);
    await reconcileNow(name); // the second listing finds the same two: it agrees

    expect(seen().filter(([, op]) => op === 'delete')).toEqual([
      ['a', 'delete'],
      ['b', 'delete'],
    ]);
    expect((await status(name)).reconcile?.last_listing?.outcome).toBe('agreed');
    await api('DELETE', `/pollers/${name}`);
  });

  it('releases the held deletes a later listing finds again, and drops those it does not', async () => {
    for (const id of ['a', 'b', 'c', 'd']) saas.put(id, Date.now() - 5 * MINUTE);
    const name = await withListing('reconcile-partial-agree', { max_deletes: 1 });
    await runToRest(name);
    saas.remove('a');
    saas.remove('b');
    saas.remove('c');
    await reconcileNow(name); // 3 > 1: held
    saas.put('c', Date.now()); // back before the next listing

    await reconcileNow(name); // finds a and b again: they go; c is listed: dropped

    expect(seen().filter(([, op]) => op === 'delete')).toEqual([
      ['a', 'delete'],
      ['b', 'delete'],
    ]);
    const view = (await status(name)).reconcile;
    expect(view?.held).toBeNull();
    expect(view?.last_listing?.outcome).toBe('agreed');
    await api('DELETE', `/pollers/${name}`);
  });

  it('sends a tombstone the listing shows once, as a delete, and not again at later listings', async () => {
    saas.put('soft', Date.now() - 5 * MINUTE);
    const name = await withListing(
      'reconcile-tombstone',
      {},
      {
        source: { deleted: { path: 'status', equals: 'deleted' } },
      },
    );
    await runToRest(name);
    // Soft-deleted with its old updated_at: the stream cannot show it; the listing does.
    saas.put('soft', Date.now() - 5 * MINUTE, { status: 'deleted' });

    await reconcileNow(name);
    await reconcileNow(name);

    expect(seen()).toEqual([
      ['soft', 'upsert'],
      ['soft', 'delete'],
    ]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('delivers no delete for a listing that comes back empty once', async () => {
    for (const id of ['a', 'b', 'c']) saas.put(id, Date.now() - 5 * MINUTE);
    const name = await withListing('reconcile-empty');
    await runToRest(name);
    saas.respondOnce('/v1/all', () => Response.json({ sessions: [], next_cursor: null }));

    await reconcileNow(name); // empty: 3 deletes of 3, held
    expect((await status(name)).reconcile?.held?.deletes).toBe(3);
    await reconcileNow(name); // the next listing shows them all: it disagrees

    expect(seen().filter(([, op]) => op === 'delete')).toEqual([]);
    const view = (await status(name)).reconcile;
    expect(view?.held).toBeNull();
    expect(view?.last_listing).toMatchObject({ ids: 3, deletes: 0, outcome: 'delivered' });
    expect(view?.pending).toBe(0);
    await api('DELETE', `/pollers/${name}`);
  });

  it('takes no listing as agreeing with what an empty one held: a cut-short listing after it deletes nothing', async () => {
    for (const id of ['a', 'b', 'c', 'd']) saas.put(id, Date.now() - 5 * MINUTE);
    const name = await withListing('reconcile-empty-then-cut');
    await runToRest(name);
    saas.respondOnce('/v1/all', () => Response.json({ sessions: [], next_cursor: null }));
    saas.respondOnce('/v1/all', () =>
      Response.json({
        sessions: [{ id: 'a', updated_at: new Date().toISOString() }],
        next_cursor: null,
      }),
    );

    await reconcileNow(name); // empty: all four held
    await reconcileNow(name); // cut short: lacks b, c and d, which the empty one "found" too

    expect(seen().filter(([, op]) => op === 'delete')).toEqual([]);
    expect((await status(name)).reconcile?.held?.deletes).toBe(3);
    await api('DELETE', `/pollers/${name}`);
  });

  it('never takes a second empty listing as agreeing: what an empty listing found waits for a confirm', async () => {
    for (const id of ['a', 'b']) saas.put(id, Date.now() - 5 * MINUTE);
    const name = await withListing('reconcile-empty-twice', { max_deletes: '100%' });
    await runToRest(name);
    for (const _ of [1, 2]) {
      saas.respondOnce('/v1/all', () => Response.json({ sessions: [], next_cursor: null }));
    }

    await reconcileNow(name);
    await reconcileNow(name);

    expect(seen().filter(([, op]) => op === 'delete')).toEqual([]);
    expect((await status(name)).reconcile?.held?.reason).toContain('the listing was empty');
    await api('POST', `/pollers/${name}/reconcile/confirm`);
    await newPoller(name, name).settle();
    expect(seen().filter(([, op]) => op === 'delete')).toEqual([
      ['a', 'delete'],
      ['b', 'delete'],
    ]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('upserts a record restored with its old updated_at once, not at every listing after', async () => {
    saas.put('phoenix', Date.now() - 5 * MINUTE, { title: 'first life' });
    saas.put('other', Date.now() - 5 * MINUTE);
    const name = await withListing('reconcile-restore', {
      updated_at: 'updated_at',
      max_deletes: '100%',
    });
    await runToRest(name);
    saas.remove('phoenix');
    await reconcileNow(name); // its delete is delivered, stamped with the listing's start
    saas.put('phoenix', Date.now() - 5 * MINUTE, { title: 'restored' }); // from a backup

    await reconcileNow(name);
    await reconcileNow(name);

    expect(seen().filter(([id]) => id === 'phoenix')).toEqual([
      ['phoenix', 'upsert'],
      ['phoenix', 'delete'],
      ['phoenix', 'upsert'],
    ]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('starts a listing over after its page failed five times in a row (a cursor the upstream let expire)', async () => {
    for (const id of ['a', 'b', 'c']) saas.put(id, Date.now() - 5 * MINUTE);
    saas.perPage = 2;
    const name = await withListing('reconcile-restart');
    const poller = newPoller(name, name);
    await runToRest(name);
    // Its first listing's first page hands out a cursor that fails from then on.
    saas.respondOnce('/v1/all', () =>
      Response.json({
        sessions: [{ id: 'a', updated_at: new Date().toISOString() }],
        next_cursor: 'expiring',
      }),
    );
    for (let i = 0; i < 8; i += 1) {
      saas.respondOnce('/v1/all', (url) =>
        url.searchParams.get('cursor') === 'expiring'
          ? new Response('cursor expired', { status: 410 })
          : saas.answer(url),
      );
    }
    await reconcileNow(name); // page 1, then the cursor fails
    for (let i = 0; i < 5; i += 1) {
      await poller.sql(`UPDATE reconcile_state SET state = json_set(state, '$.retryAt', 0)`);
      await runToRest(name);
    }
    const cursors = saas.asked('/v1/all').map((url) => url.searchParams.get('cursor'));
    // Failures 1–5 on the expired cursor, then a fresh listing from its first page.
    expect(cursors.slice(0, 6)).toEqual([
      null,
      'expiring',
      'expiring',
      'expiring',
      'expiring',
      'expiring',
    ]);
    expect(cursors.slice(6)).toEqual([null, '2']);
    expect((await status(name)).reconcile?.last_listing).toMatchObject({ ids: 3, deletes: 0 });
    await api('DELETE', `/pollers/${name}`);
  });

  it('resumes a listing from its page after the object died mid-listing, with no false delete', async () => {
    for (const id of ['a', 'b', 'c', 'd', 'e']) saas.put(id, Date.now() - 5 * MINUTE);
    saas.perPage = 2;
    const name = await withListing('reconcile-crash', { max_deletes: '100%' });
    const poller = newPoller(name, name);
    await runToRest(name);
    const page2 = saas.holdNext('/v1/all', 1); // the listing's second page

    await api('POST', `/pollers/${name}/reconcile`); // its run starts by the alarm
    await page2.arrived();
    await poller.abort(); // the object dies with the second page in flight
    page2.release();
    await poller.expireLease();
    await poller.alarm(); // the recovery run goes on with the listing
    await poller.settle();

    const cursors = saas.asked('/v1/all').map((url) => url.searchParams.get('cursor'));
    expect(cursors).toEqual([null, '2', '2', '4']); // page 1 is not asked again
    expect(seen().filter(([, op]) => op === 'delete')).toEqual([]);
    expect((await status(name)).reconcile?.last_listing).toMatchObject({ ids: 5, deletes: 0 });
    await api('DELETE', `/pollers/${name}`);
  });

  it('keeps a failing listing apart: the run succeeds, status says why, and it is tried again later', async () => {
    saas.put('a', Date.now() - 5 * MINUTE);
    const name = await withListing('reconcile-failing');
    await runToRest(name);
    saas.respondOnce('/v1/all', () => new Response('maintenance', { status: 503 }));

    await reconcileNow(name);

    expect((await status(name)).last_run?.outcome).toBe('success');
    const view = (await status(name)).reconcile;
    expect(view?.error?.message).toContain('listing page 1');
    expect(view?.error?.message).toContain('HTTP 503');
    expect(Date.parse(view?.error?.retry_at ?? '')).toBeGreaterThan(Date.now());
    expect((await status(name)).consecutive_failures).toBe(0);
    await api('DELETE', `/pollers/${name}`);
  });

  it('drops a delete found by a listing when the stream delivers its id again first (a delete racing an update)', async () => {
    saas.put('a', Date.now() - 5 * MINUTE);
    saas.put('back', Date.now() - 5 * MINUTE);
    const name = await withListing('reconcile-race', { max_deletes: '100%' });
    await runToRest(name);
    saas.remove('back');
    receiver.fail('back', 503, 1); // the delete it finds does not get through at once

    await reconcileNow(name);
    expect((await status(name)).reconcile?.pending).toBe(1);
    // Meanwhile the id comes back with a new version: the next run's stream delivers it,
    // then (its backoff over) the reconciliation finds the delete overtaken.
    saas.put('back', Date.now());
    await newPoller(name, name).sql(
      `UPDATE reconcile_state SET state = json_set(state, '$.retryAt', 0)`,
    );
    await runToRest(name);

    expect(seen().filter(([id]) => id === 'back')).toEqual([
      ['back', 'upsert'],
      ['back', 'upsert'],
    ]);
    const after = await status(name);
    expect(after.reconcile?.pending).toBe(0);
    expect(after.storage.tables.delivery_failures.rows).toBe(0); // its failure went with it
    await api('DELETE', `/pollers/${name}`);
  });

  it('does not delete a live record an offset-paged listing skipped when one on a page it had read went away; deletes that one once confirmed', async () => {
    for (const id of ['a', 'b', 'c', 'd', 'e']) saas.put(id, Date.now() - 5 * MINUTE);
    saas.perPage = 2; // by offset: the cursor is the index of the page's first record
    const name = await withListing('reconcile-offset-shift', { max_deletes: 1 });
    await runToRest(name);
    // a goes away once page 1 (a, b) is read: page 2 at offset 2 is (d, e), c is skipped.
    saas.respondOnce('/v1/all', (url) => {
      const page = saas.answer(url);
      saas.remove('a');
      return page;
    });

    await reconcileNow(name);

    // The first listing lacked c, one delete of five (within max_deletes); the second, at
    // once, listed c and lacked a, which the first had listed: nothing goes out yet.
    expect(seen().filter(([, op]) => op === 'delete')).toEqual([]);
    const first = (await status(name)).reconcile;
    expect(first?.last_listing).toMatchObject({ deletes: 1, outcome: 'unconfirmed' });
    expect(first?.unconfirmed).toBe(1);

    await reconcileNow(name); // lacks a again: confirmed

    expect(seen().filter(([, op]) => op === 'delete')).toEqual([['a', 'delete']]);
    expect((await status(name)).reconcile).toMatchObject({
      unconfirmed: 0,
      pending: 0,
      last_listing: { outcome: 'agreed' },
    });
    await api('DELETE', `/pollers/${name}`);
  });

  it('with reconcile.fetch, delivers a listing delete only when the record answers 404, and drops one that answers', async () => {
    for (const id of ['a', 'b', 'c', 'd', 'e']) saas.put(id, Date.now() - 5 * MINUTE);
    saas.perPage = 2;
    const name = await withListing('reconcile-offset-fetch', {
      max_deletes: 1,
      fetch: 'https://upstream.test/v1/sessions/{id}',
    });
    await runToRest(name);
    saas.respondOnce('/v1/all', (url) => {
      const page = saas.answer(url);
      saas.remove('a');
      return page;
    });

    await reconcileNow(name); // lacks c, which its fetch answers: dropped
    expect(saas.asked('/v1/sessions/c')).toHaveLength(1);
    expect(seen().filter(([, op]) => op === 'delete')).toEqual([]);

    await reconcileNow(name); // lacks a, which its fetch answers 404: delivered
    expect(saas.asked('/v1/sessions/a')).toHaveLength(1);
    expect(seen().filter(([, op]) => op === 'delete')).toEqual([['a', 'delete']]);
    // One listing each time: the fetch confirmed, no second listing was needed.
    expect(saas.asked('/v1/all').filter((url) => !url.searchParams.has('cursor'))).toHaveLength(2);
    await api('DELETE', `/pollers/${name}`);
  });

  it('answers 404 for a poller without reconcile, and 409 to a confirm with nothing held', async () => {
    const plain = await createPoller('no-reconcile', { sinceMs: MINUTE });
    expect((await api('POST', `/pollers/${plain}/reconcile`)).status).toBe(404);
    const name = await withListing('reconcile-nothing-held');
    const confirm = await api('POST', `/pollers/${name}/reconcile/confirm`);
    expect(confirm.status).toBe(409);
    expect(await confirm.json()).toEqual({ error: 'no deletes are held: nothing to confirm' });
    await api('DELETE', `/pollers/${plain}`);
    await api('DELETE', `/pollers/${name}`);
  });
});
