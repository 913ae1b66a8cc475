import { describe, expect, it } from 'vitest';
import type { DeliveryItem, RunContext } from '../../src/engine/ports.ts';
import { queuedDeadLetter, replayDeadLetter } from '../../src/poller/dead-letters.ts';
import type { SqliteStore } from '../../src/poller/store/index.ts';
import { world } from '../support/children-world.ts';

/** The little of SqliteStore a replay uses, around one stored dead letter. */
function storeWith(letter: Record<string, unknown>): SqliteStore {
  const letters = new Map([[letter.key as string, letter]]);
  const fake = {
    deadLetters: {
      find: (key: string) => letters.get(key),
      remove: (key: string) => letters.delete(key),
      recordReplayFailure: () => {},
    },
    audit: { append: () => {} },
    read: () => ({ lease: { held: false, epoch: 1 } }),
    holdAside: () => 2,
    releaseAside: () => {},
  };
  return fake as unknown as SqliteStore;
}

describe('children: replaying a dead-lettered child', () => {
  const base = {
    kind: 'delivery',
    id: 'ACME-1/101',
    version: '2026-09-01T00:00:00.000Z',
    versionMs: Date.parse('2026-09-01T00:00:00.000Z'),
    recordBytes: null,
    error: 'HTTP 400',
    attempts: 5,
    firstFailure: 0,
    lastFailure: 0,
    parent: 'ACME-1',
  };

  const replay = async (letter: Record<string, unknown>) => {
    const got: DeliveryItem[] = [];
    const { ctx } = world();
    const context: RunContext = {
      ...ctx,
      deliverer: {
        batch: 1,
        async deliver(items) {
          got.push(...items);
          return { kind: 'delivered' as const };
        },
      },
    };
    const result = await replayDeadLetter(
      storeWith(letter),
      context,
      async () => {},
      letter.key as string,
    );
    return { result, got };
  };

  it('names its parent, as its first delivery did', async () => {
    const key = 'comments:ACME-1/101:2026-09-01T00:00:00.000Z';
    const { result, got } = await replay({ ...base, key, recordText: '{"id":"101","body":"x"}' });
    expect(result.outcome).toBe('delivered');
    expect(got[0]?.update.parent).toBe('ACME-1');
    expect(got[0]?.op).toBe('upsert');
  });

  it('a child delete (children.deletes) replays as a delete, not as an upsert of null', async () => {
    const key = 'comments:ACME-1/101:2026-09-01T00:00:00.000Z';
    const { result, got } = await replay({ ...base, key, recordText: 'null' });
    expect(result.outcome).toBe('delivered');
    expect(got[0]?.op).toBe('delete');
  });
});

describe('children: a child the queue consumer gave up on', () => {
  it('is kept with its parent, so that its replay is what it was (a delete stays a delete)', () => {
    const letter = queuedDeadLetter(
      {
        key: 'comments:ACME-1/101:2026-09-01T00:00:00.000Z',
        id: 'ACME-1/101',
        version: '2026-09-01T00:00:00.000Z',
        record: 'null',
        attempts: 3,
        at: 0,
        parent: 'ACME-1',
      },
      1,
    );
    expect(letter.parent).toBe('ACME-1');
  });
});
