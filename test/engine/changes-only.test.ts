import fc from 'fast-check';
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
const START = Date.parse('2026-09-01T00:00:00Z');

function configOf(options: { deletions?: boolean; maxAttempts?: number } = {}) {
  const entry = loadPoller(
    'changes',
    {
      every: '1m',
      start_from: new Date(START - 10 * MINUTE).toISOString(),
      max_attempts: options.maxAttempts ?? 50,
      source: {
        url: 'https://api.test/changes',
        from_param: 'since',
        next: { type: 'cursor', param: 'cursor', path: 'next' },
        ...(options.deletions ? { deletions: { url: 'https://api.test/deleted' } } : {}),
      },
      deliver: {
        type: 'handler',
        name: 'changes',
        changes_only: true,
        changes_ignore: ['updated_at'],
      },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  return entry.config;
}

/** An event-log upstream (every version shown, oldest first) paged `perPage` at a time. */
function logSource(log: Update[], perPage: () => number): Source {
  return {
    async fetchPage(window, cursor): Promise<PageResult> {
      const shown = log
        .filter((update) => update.versionMs >= window.from)
        .sort((a, b) => a.versionMs - b.versionMs);
      const offset = Number(cursor ?? 0);
      const size = perPage();
      const next = offset + size < shown.length ? String(offset + size) : null;
      return { ok: true, updates: shown.slice(offset, offset + size), malformed: [], next };
    },
  };
}

/**
 * A receiver that holds, per id, the newest version it got (an upsert's title, or deleted),
 * and refuses the deliveries `refuse` says no to (a 503: retried).
 */
class Receiver {
  readonly got: DeliveryItem[] = [];
  readonly held = new Map<string, { versionMs: number; title: string | null }>();
  refuse: (item: DeliveryItem) => boolean = () => false;

  async deliver(items: DeliveryItem[]) {
    for (const [index, item] of items.entries()) {
      if (this.refuse(item))
        return { kind: 'retry' as const, error: 'HTTP 503', deliveredPrefix: index };
      this.got.push(item);
      const before = this.held.get(item.update.id);
      if (before !== undefined && before.versionMs > item.update.versionMs) continue;
      const title = item.op === 'delete' ? null : titleOf(item.update.record);
      this.held.set(item.update.id, { versionMs: item.update.versionMs, title });
    }
    return { kind: 'delivered' as const };
  }

  titles(id: string): (string | null)[] {
    return this.got
      .filter((item) => item.update.id === id)
      .map((item) => (item.op === 'delete' ? null : titleOf(item.update.record)));
  }
}

function titleOf(record: unknown): string {
  return String((record as { title?: unknown }).title);
}

function version(id: string, at: number, title: string): Update {
  const stamp = new Date(at).toISOString();
  return { id, version: stamp, versionMs: at, record: { id, updated_at: stamp, title } };
}

function world(
  options: { deletions?: boolean; maxAttempts?: number; perPage?: () => number } = {},
) {
  const clock = { now: START };
  const log: Update[] = [];
  const deletes: Update[] = [];
  const receiver = new Receiver();
  const store = new MemoryStore();
  const config = configOf(options);
  const ctx: RunContext = {
    poller: 'changes',
    config,
    store,
    source: logSource(log, options.perPage ?? (() => 100)),
    deliverer: receiver,
    now: () => clock.now,
    random: () => 0.5,
  };
  const deletionsConfig = deletionsSource(config.source);
  if (deletionsConfig !== null) {
    ctx.deletions = deletionsContext(
      ctx,
      logSource(deletes, () => 100),
      deletionsConfig,
    );
  }
  const engine = new PollerEngine(ctx, { set: async () => {} });
  const run = async () => {
    clock.now += MINUTE;
    await engine.trigger('manual');
    return engine.onAlarm();
  };
  return { clock, log, deletes, receiver, store, run };
}

describe('deliver.changes_only judges each version against the one sent before it', () => {
  it('delivers a version that reverts the one before it on the same page', async () => {
    const w = world();
    w.log.push(version('x', START - 5 * MINUTE, 'B'));
    await w.run();
    // One page holds x@v2 (C) and x@v3 (B again): v3 changes what the receiver has (C).
    w.log.push(version('x', w.clock.now + 1_000, 'C'), version('x', w.clock.now + 2_000, 'B'));
    await w.run();

    expect(w.receiver.titles('x')).toEqual(['B', 'C', 'B']);
    expect(w.receiver.held.get('x')?.title).toBe('B');
  });

  it('delivers a newer version that reverts an older one retried in front of it', async () => {
    const w = world();
    w.log.push(version('x', START - 5 * MINUTE, 'B'));
    await w.run();
    // v2 (C) fails; the next run retries it in front of v3, which says B again.
    w.log.push(version('x', w.clock.now + 1_000, 'C'));
    w.receiver.refuse = (item) => titleOf(item.update.record) === 'C';
    await w.run();
    w.receiver.refuse = () => false;
    w.log.push(version('x', w.clock.now + 2_000, 'B'));
    await w.run();

    expect(w.receiver.titles('x')).toEqual(['B', 'C', 'B']);
    expect(w.receiver.held.get('x')?.title).toBe('B');
  });

  it('compares with the last version delivered, not with one whose delivery failed', async () => {
    const w = world({ maxAttempts: 1 });
    w.log.push(version('x', START - 5 * MINUTE, 'B'));
    await w.run();
    // v2 (C) is refused for good (a dead letter); v3 says C too: the receiver still has B.
    const failed = version('x', w.clock.now + 1_000, 'C');
    w.log.push(failed, version('x', w.clock.now + 2_000, 'C'));
    w.receiver.refuse = (item) => item.update.versionMs === failed.versionMs;
    await w.run();

    expect(w.store.deadLetters.size).toBe(1);
    expect(w.receiver.titles('x')).toEqual(['B', 'C']);
    expect(w.receiver.held.get('x')?.title).toBe('C');
  });

  it('leaves the receiver with every id as the upstream has it, whatever the pages and failures (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            id: fc.constantFrom('a', 'b'),
            title: fc.constantFrom('A', 'B', 'C'),
            tick: fc.integer({ min: 0, max: 4 }),
          }),
          { minLength: 1, maxLength: 14 },
        ),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 10 }),
        async (changes, refusals, pageSizes) => {
          let page = 0;
          const w = world({ perPage: () => pageSizes[page++ % pageSizes.length] ?? 1 });
          let refusal = 0;
          w.receiver.refuse = () => refusals[refusal++ % refusals.length] ?? false;
          let at = START - 5 * MINUTE;
          for (let tick = 0; tick <= 4; tick += 1) {
            for (const change of changes.filter((c) => c.tick === tick)) {
              at = Math.max(at + 1, w.clock.now + 1_000);
              w.log.push(version(change.id, at, change.title));
            }
            await w.run();
          }
          w.receiver.refuse = () => false;
          for (let settle = 0; settle < 6; settle += 1) await w.run();

          expect(w.store.deadLetters.size).toBe(0);
          for (const id of ['a', 'b']) {
            const versions = w.log.filter((update) => update.id === id);
            const last = versions.at(-1);
            if (last === undefined) continue;
            expect(w.receiver.held.get(id)?.title).toBe(titleOf(last.record));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('deliver.changes_only beside a deletions stream', () => {
  it('delivers a record restored with the content it had before its delete', async () => {
    const w = world({ deletions: true });
    w.log.push(version('x', START - 5 * MINUTE, 'B'));
    await w.run();
    w.deletes.push(version('x', w.clock.now + 1_000, 'B'));
    await w.run();
    // Restored as it was: the receiver deleted it, so it is a change.
    w.log.push(version('x', w.clock.now + 1_000, 'B'));
    await w.run();

    expect(w.receiver.got.map((item) => [item.update.id, item.op])).toEqual([
      ['x', 'upsert'],
      ['x', 'delete'],
      ['x', 'upsert'],
    ]);
    expect(w.receiver.held.get('x')?.title).toBe('B');
  });

  it('keeps a record deleted and restored as it was between two runs: the restore, read first, and the older delete change nothing', async () => {
    const w = world({ deletions: true });
    w.log.push(version('x', START - 5 * MINUTE, 'B'));
    await w.run();
    // Both before the next run: its main stream sees the restore, its deletions pass the delete.
    w.deletes.push(version('x', w.clock.now + 1_000, 'B'));
    w.log.push(version('x', w.clock.now + 2_000, 'B'));
    await w.run();

    expect(w.receiver.held.get('x')?.title).toBe('B');
    expect(w.store.runs.at(-1)).toMatchObject({ outcome: 'success', unchanged: 2 });
  });

  it('leaves the receiver with every id as the upstream has it, deleted or not, whatever the pages and failures (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            id: fc.constantFrom('a', 'b'),
            title: fc.constantFrom('A', 'B', null),
            tick: fc.integer({ min: 0, max: 4 }),
          }),
          { minLength: 1, maxLength: 14 },
        ),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 10 }),
        async (changes, refusals, pageSizes) => {
          let page = 0;
          const w = world({
            deletions: true,
            perPage: () => pageSizes[page++ % pageSizes.length] ?? 1,
          });
          let refusal = 0;
          w.receiver.refuse = () => refusals[refusal++ % refusals.length] ?? false;
          const latest = new Map<string, string | null>();
          let at = START - 5 * MINUTE;
          for (let tick = 0; tick <= 4; tick += 1) {
            for (const change of changes.filter((c) => c.tick === tick)) {
              at = Math.max(at + 1, w.clock.now + 1_000);
              // A title of null is a delete, which the deletions stream lists.
              const list = change.title === null ? w.deletes : w.log;
              list.push(version(change.id, at, change.title ?? ''));
              latest.set(change.id, change.title);
            }
            await w.run();
          }
          w.receiver.refuse = () => false;
          for (let settle = 0; settle < 6; settle += 1) await w.run();

          expect(w.store.deadLetters.size).toBe(0);
          for (const [id, title] of latest) expect(w.receiver.held.get(id)?.title).toBe(title);
        },
      ),
      { numRuns: 150 },
    );
  });
});
