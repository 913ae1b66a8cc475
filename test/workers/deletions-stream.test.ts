import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import { api, createPoller, objectOf } from '../support/fleet.ts';
import { FakeSaas } from './fake-saas.ts';
import { type FakeReceiver, installFakes } from './fakes.ts';

const MINUTE = 60_000;
let saas: FakeSaas;
let receiver: FakeReceiver;

beforeEach(() => {
  saas = new FakeSaas();
  ({ receiver } = installFakes({ 'upstream.test': saas }));
});

/** A runtime poller of the fake SaaS with a deletions stream, started `sinceMs` ago. */
function withDeletions(prefix: string, extra: Record<string, unknown> = {}) {
  return createPoller(prefix, {
    sinceMs: 10 * MINUTE,
    source: { deletions: { url: 'https://upstream.test/v1/deleted' } },
    ...extra,
  });
}

const seen = () => receiver.deliveries.map((d) => [d.id, d.op, d.type]);

describe('a deletions stream (source.deletions)', () => {
  it('delivers each entry as a delete, record.deleted, beside the upserts of the main stream', async () => {
    saas.put('kept', Date.now() - 5 * MINUTE);
    saas.put('x', Date.now() - 4 * MINUTE);
    saas.remove('x', { at: Date.now() - 3 * MINUTE, logged: true });
    const name = await withDeletions('deletions-op');

    await objectOf(name).runNow();

    // A deleted record drops out of the changed-since stream: it shows "kept" only.
    expect(seen()).toEqual([
      ['kept', 'upsert', 'record.updated'],
      ['x', 'delete', 'record.deleted'],
    ]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('puts a delete after an update of its id delivered in the same run, whatever their stamps', async () => {
    // The update is stamped after the delete it races: the stream still goes first.
    saas.deleted.push({ id: 'raced', deletedAtMs: Date.now() - 3 * MINUTE });
    saas.put('raced', Date.now() - MINUTE);
    const name = await withDeletions('deletions-race');

    await objectOf(name).runNow();

    expect(seen()).toEqual([
      ['raced', 'upsert', 'record.updated'],
      ['raced', 'delete', 'record.deleted'],
    ]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('keys a delete apart from an update that shares its time: both reach the receiver, each with its own key', async () => {
    const at = Date.now() - 2 * MINUTE;
    saas.put('same', at);
    saas.deleted.push({ id: 'same', deletedAtMs: at });
    const name = await withDeletions('deletions-keys');

    await objectOf(name).runNow();

    const keys = receiver.deliveries.map((d) => d.key);
    expect(keys).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
    expect(keys[1]).toMatch(/:deleted$/);
    await api('DELETE', `/pollers/${name}`);
  });

  it('keeps its own checkpoint: the next run asks the deletions endpoint from where its last window started', async () => {
    const name = await withDeletions('deletions-checkpoint');
    await objectOf(name).runNow();
    const firstMain = saas.asked('/v1/sessions').length;
    const before = Date.now();
    await objectOf(name).runNow();

    const deletionFroms = saas
      .asked('/v1/deleted')
      .map((url) => Date.parse(url.searchParams.get('date_from') ?? ''));
    expect(deletionFroms).toHaveLength(2);
    // The first window started at start_from; the second at the first run's start (T).
    expect(deletionFroms[0]).toBeLessThan(before - 9 * MINUTE);
    expect(deletionFroms[1]).toBeGreaterThan(before - MINUTE);
    expect(saas.asked('/v1/sessions').length).toBe(firstMain + 1);
    await api('DELETE', `/pollers/${name}`);
  });

  it('does not move its checkpoint when its endpoint fails, and the retry delivers what it missed (R1, R2)', async () => {
    saas.remove('late', { at: Date.now() - 2 * MINUTE, logged: true });
    saas.respondOnce('/v1/deleted', () => new Response('down', { status: 503 }));
    const name = await withDeletions('deletions-fail');

    const first = await objectOf(name).runNow();
    expect(first).toMatchObject({ outcome: 'ran', run: { outcome: 'failed' } });
    expect(seen()).toEqual([]);

    await objectOf(name).runNow();
    expect(seen()).toEqual([['late', 'delete', 'record.deleted']]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('retries a delete the receiver refused as a delete, and a dead-lettered one replays as a delete', async () => {
    saas.remove('stubborn', { at: Date.now() - 2 * MINUTE, logged: true });
    receiver.fail('stubborn', 503, 1);
    const name = await withDeletions('deletions-retry', { max_attempts: 2 });

    await objectOf(name).runNow();
    expect(seen()).toEqual([]);
    await objectOf(name).runNow();
    expect(seen()).toEqual([['stubborn', 'delete', 'record.deleted']]);

    // Now one that never gets through: dead-lettered, then replayed as what it was.
    saas.remove('poison', { at: Date.now(), logged: true });
    receiver.fail('poison', 400, 2);
    await objectOf(name).runNow();
    await objectOf(name).runNow(); // its second attempt, the last (max_attempts = 2)
    const letters = (await (await api('GET', `/pollers/${name}/dead-letters`)).json()) as {
      items: { key: string }[];
    };
    const key = letters.items[0]?.key ?? '';
    expect(key).toMatch(/:poison:.*:deleted$/);
    const replay = await api(
      'POST',
      `/pollers/${name}/dead-letters/${encodeURIComponent(key)}/replay`,
    );
    expect(replay.status).toBe(200);
    expect(seen().at(-1)).toEqual(['poison', 'delete', 'record.deleted']);
    await api('DELETE', `/pollers/${name}`);
  });

  it('with deliver.changes_only, delivers a record restored with the content it had before its delete', async () => {
    saas.put('back', Date.now() - 5 * MINUTE, { title: 'same' });
    const name = await withDeletions('deletions-restore', {
      deliver: { changes_only: true, changes_ignore: ['updated_at'] },
    });
    await objectOf(name).runNow();
    saas.remove('back', { at: Date.now(), logged: true });
    await objectOf(name).runNow();
    // Restored as it was: the receiver deleted it, so the upsert is a change.
    saas.put('back', Date.now() + 1, { title: 'same' });
    await objectOf(name).runNow();

    expect(seen()).toEqual([
      ['back', 'upsert', 'record.updated'],
      ['back', 'delete', 'record.deleted'],
      ['back', 'upsert', 'record.updated'],
    ]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('with deliver.changes_only, keeps a record deleted and restored as it was between two runs', async () => {
    saas.put('twice', Date.now() - 5 * MINUTE, { title: 'same' });
    const name = await withDeletions('deletions-undo', {
      deliver: { changes_only: true, changes_ignore: ['updated_at'] },
    });
    await objectOf(name).runNow();
    // Deleted and restored before the next run: its main stream reads the restore (the same
    // content: not sent), then its deletions pass the delete, which the restore overtook.
    saas.remove('twice', { at: Date.now(), logged: true });
    saas.put('twice', Date.now() + 1, { title: 'same' });
    await objectOf(name).runNow();

    expect(seen()).toEqual([['twice', 'upsert', 'record.updated']]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('reports a window of its own too big for one run, measured beside its own checkpoint and not in the main stream row', async () => {
    saas.perPage = 2;
    for (let i = 0; i < 40; i += 1) {
      saas.deleted.push({ id: `gone${i}`, deletedAtMs: Date.now() - 5 * MINUTE + i });
    }
    const name = await withDeletions('deletions-stall', { max_subrequests: 12 });
    const stalls = () =>
      runInDurableObject(objectOf(name), (_instance: Poller, state) => ({
        main: state.storage.sql.exec('SELECT stall_from, stall_pages FROM poller_state').one(),
        deletions: state.storage.sql
          .exec('SELECT stall_from, stall_pages FROM deletions_stream')
          .one(),
      }));

    const first = await objectOf(name).runNow();
    expect(first).toMatchObject({ outcome: 'ran', run: { outcome: 'continued' } });
    const cut = await stalls();
    expect(cut.main).toEqual({ stall_from: null, stall_pages: null });
    expect(cut.deletions.stall_from).toBe(
      Date.parse(saas.asked('/v1/deleted')[0]?.searchParams.get('date_from') ?? ''),
    );

    // Each continuation reads it again from its first page (the ledger skips what was
    // delivered) and gets further, until one does not: then it says so, and stops.
    await vi.waitUntil(
      async () => {
        const [last] = await objectOf(name).runs(1);
        if (last?.outcome === 'failed') return true;
        await runDurableObjectAlarm(objectOf(name));
        return false;
      },
      { timeout: 4_000, interval: 10 },
    );
    const [last] = await objectOf(name).runs(1);
    expect(last?.error).toContain('is too big for one run');
    await api('DELETE', `/pollers/${name}`);
  });

  it('refuses a deletions url on another origin: the source headers would go with it', async () => {
    const response = await api('PUT', '/pollers/deletions-elsewhere', {
      every: '60s',
      source: {
        url: 'https://upstream.test/v1/sessions',
        from_param: 'date_from',
        deletions: { url: 'https://other.test/v1/deleted' },
      },
      deliver: { type: 'webhook', url: 'https://receiver.test/hooks', secret: '${WEBHOOK_SECRET}' },
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("source.deletions.url: must be on source.url's origin");
  });
});
