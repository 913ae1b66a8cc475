import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { deletionsContext } from '../../src/engine/deletions-stream.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type {
  DeliveryItem,
  PageResult,
  RunContext,
  Source,
  Update,
} from '../../src/engine/ports.ts';
import { deletionsSource } from '../../src/sources/derived-sources.ts';

const MINUTE = 60_000;
const START = Date.parse('2026-10-01T00:00:00Z');
const PER_PAGE = 4;

/** A poller with a deletions stream, a subrequest budget of `maxSubrequests` per run. */
function configOf(maxSubrequests: number, sorted: boolean) {
  const entry = loadPoller(
    'deleting',
    {
      every: '1m',
      start_from: new Date(START - 30 * MINUTE).toISOString(),
      max_subrequests: maxSubrequests,
      source: {
        url: 'https://api.test/changes',
        from_param: 'since',
        next: { type: 'cursor', param: 'cursor', path: 'next' },
        deletions: { url: 'https://api.test/deleted', ...(sorted ? { sorted: 'asc' } : {}) },
      },
      deliver: { type: 'handler', name: 'deleting' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  return entry.config;
}

/** A list of records since the window's start, oldest first, 4 a page. */
function listSource(records: Update[], asked: { from: number; cursor: string | null }[]): Source {
  return {
    async fetchPage(window, cursor): Promise<PageResult> {
      asked.push({ from: window.from, cursor });
      const shown = records.filter((record) => record.versionMs >= window.from);
      const offset = Number(cursor ?? 0);
      const next = offset + PER_PAGE < shown.length ? String(offset + PER_PAGE) : null;
      return { ok: true, updates: shown.slice(offset, offset + PER_PAGE), malformed: [], next };
    },
  };
}

function entry(id: string, at: number): Update {
  const version = new Date(at).toISOString();
  return { id, version, versionMs: at, record: { id, deleted_at: version } };
}

/** `deletes` deletes logged in the poller's first window, one main record, and the engine. */
function world(options: { deletes: number; maxSubrequests: number; sorted?: boolean }) {
  const clock = { now: START };
  const store = new MemoryStore();
  const config = configOf(options.maxSubrequests, options.sorted ?? false);
  const deletes = Array.from({ length: options.deletes }, (_, i) =>
    entry(`gone${String(i).padStart(3, '0')}`, START - 20 * MINUTE + i),
  );
  const deletionPages: { from: number; cursor: string | null }[] = [];
  const delivered: DeliveryItem[] = [];
  const ctx: RunContext = {
    poller: 'deleting',
    config,
    store,
    source: listSource([entry('kept', START - 25 * MINUTE)], []),
    deliverer: {
      async deliver(items) {
        delivered.push(...items);
        return { kind: 'delivered' };
      },
    },
    now: () => clock.now,
    random: () => 0.5,
  };
  const deletionsConfig = deletionsSource(config.source);
  if (deletionsConfig === null) throw new Error('no deletions stream');
  ctx.deletions = deletionsContext(ctx, listSource(deletes, deletionPages), deletionsConfig);
  const engine = new PollerEngine(ctx, { set: async () => {} });
  /** Runs, then every continuation or retry the runs book, up to `runs` runs in all. */
  const runs = async (count: number) => {
    const outcomes: string[] = [];
    clock.now += MINUTE;
    await engine.trigger('manual');
    outcomes.push((await engine.onAlarm())?.outcome ?? 'none');
    while (outcomes.length < count && store.read().wakeup !== null) {
      clock.now = Math.max(clock.now + 1_000, store.read().wakeup?.at ?? 0);
      outcomes.push((await engine.onAlarm())?.outcome ?? 'none');
      if (store.read().wakeup?.reason === 'retry') break;
    }
    return outcomes;
  };
  return { store, delivered, deletionPages, runs };
}

describe('the deletions stream keeps its stall beside its own checkpoint', () => {
  it('a deletions window cut short by the budget leaves its stall with the stream, never in the main stream row', async () => {
    const w = world({ deletes: 120, maxSubrequests: 20 });
    const [first] = await w.runs(1);

    expect(first).toBe('continued');
    expect(w.store.read().stall).toBeNull();
    expect(w.store.deletionsStream.stall()).toEqual({
      from: START - 30 * MINUTE,
      pages: expect.any(Number),
    });
  });

  it('a deletions window too big for one run is reported as one, instead of being read again from its first page forever', async () => {
    const w = world({ deletes: 120, maxSubrequests: 20 });
    const outcomes = await w.runs(40);

    expect(outcomes.at(-1)).toBe('failed');
    expect(w.store.runs.at(-1)?.error).toContain('is too big for one run');
    expect(w.store.read().wakeup?.failure).toBe('misconfigured');
    expect(outcomes.filter((outcome) => outcome === 'continued').length).toBeLessThan(20);
  });

  it('a deletions window the budget cuts short goes on in the next run, getting further each time, and delivers each delete once', async () => {
    const w = world({ deletes: 40, maxSubrequests: 20 });
    const outcomes = await w.runs(20);

    expect(outcomes.at(-1)).toBe('success');
    expect(outcomes.slice(0, -1).every((outcome) => outcome === 'continued')).toBe(true);
    const deleted = w.delivered
      .filter((item) => item.op === 'delete')
      .map((item) => item.update.id);
    expect(deleted).toHaveLength(40);
    expect(new Set(deleted).size).toBe(40);
    expect(w.store.deletionsStream.stall()).toBeNull();
    expect(w.store.deletionsStream.checkpoint()).toBeGreaterThan(START);
  });

  it('a sorted deletions window the budget cuts short commits its progress: the next run starts where it stopped', async () => {
    const w = world({ deletes: 120, maxSubrequests: 20, sorted: true });
    const outcomes = await w.runs(40);

    expect(outcomes.at(-1)).toBe('success');
    const deleted = w.delivered
      .filter((item) => item.op === 'delete')
      .map((item) => item.update.id);
    expect(new Set(deleted).size).toBe(120);
    // Each run asks from where the one before stopped, never from the window's first page.
    const starts = w.deletionPages.filter((page) => page.cursor === null).map((page) => page.from);
    expect(starts).toHaveLength(outcomes.length);
    for (let i = 1; i < starts.length; i += 1) {
      expect(starts[i]).toBeGreaterThan(starts[i - 1] ?? Number.POSITIVE_INFINITY);
    }
  });
});

describe('a delete waits for a failing update of its id (R15, R19)', () => {
  it('holds the delete of an id whose update failed and was stored, and sends it after that update', async () => {
    const clock = { now: START };
    const store = new MemoryStore();
    const config = configOf(200, false);
    const sent: string[] = [];
    let upsertFails = true;
    const ctx: RunContext = {
      poller: 'deleting',
      config,
      store,
      source: listSource([entry('x', START - 25 * MINUTE)], []),
      deliverer: {
        async deliver(items) {
          if (upsertFails && items.some((item) => item.op === 'upsert')) {
            return { kind: 'retry', error: 'HTTP 500' };
          }
          sent.push(...items.map((item) => `${item.op} ${item.update.id}`));
          return { kind: 'delivered' };
        },
      },
      now: () => clock.now,
      random: () => 0.5,
    };
    const deletionsConfig = deletionsSource(config.source);
    if (deletionsConfig === null) throw new Error('no deletions stream');
    const deletes = [entry('x', START - 20 * MINUTE)];
    ctx.deletions = deletionsContext(ctx, listSource(deletes, []), deletionsConfig);
    const engine = new PollerEngine(ctx, { set: async () => {} });
    const run = async () => {
      clock.now += MINUTE;
      await engine.trigger('manual');
      return (await engine.onAlarm())?.outcome;
    };

    // The update fails and is stored; C moves on, and the delete of x waits behind it.
    expect(await run()).toBe('partial');
    expect(sent).toEqual([]);
    expect(store.failing().size).toBe(2);

    upsertFails = false;
    expect(await run()).toBe('success');
    expect(sent).toEqual(['upsert x', 'delete x']);
    expect(store.failing().size).toBe(0);
  });
});
