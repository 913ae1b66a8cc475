import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import { MIGRATIONS } from '../../src/poller/migrations.ts';
import { SqliteStore } from '../../src/poller/store/index.ts';
import { storeContract } from '../contract/store-contract.ts';

const freshObject = () => env.POLLER.get(env.POLLER.idFromName(`t-${crypto.randomUUID()}`));

describe('SqliteStore honours the store contract', () => {
  for (const [name, check] of Object.entries(storeContract)) {
    it(name, () =>
      runInDurableObject(freshObject(), (_instance: Poller, state) =>
        check(new SqliteStore(state.storage)),
      ),
    );
  }

  it("keeps a run's child requests in its history line, and a dead-lettered child's parent", async () => {
    const stored = await runInDurableObject(freshObject(), (_instance: Poller, state) => {
      const store = new SqliteStore(state.storage);
      store.acquire(0, {
        epoch: 1,
        trigger: 'cron',
        held: true,
        phase: 'running',
        startedAt: 1_000,
        expiresAt: 901_000,
      });
      const line = {
        epoch: 1,
        trigger: 'cron' as const,
        outcome: 'success' as const,
        startedAt: 1_000,
        finishedAt: 2_000,
        windows: 1,
        pages: 5,
        records: 3,
        deadLettered: 1,
        childRequests: 4,
        error: null,
        checkpoint: 5_000,
      };
      store.deadLetter(1, {
        key: 'p:P/1:v',
        kind: 'delivery',
        id: 'P/1',
        version: 'v',
        versionMs: 1,
        record: {},
        error: 'HTTP 400',
        attempts: 5,
        firstFailure: 1,
        lastFailure: 1,
        parent: 'P',
      });
      const next = {
        failures: 0,
        wakeup: null,
        skewMs: null,
        rateLimitedUntil: null,
        stall: null,
        straggleMs: 0,
      };
      store.finishRun(1, line, next);
      return { runs: store.history.runs(5), letters: store.deadLetters.page(5).letters };
    });
    expect(stored.runs[0]).toMatchObject({ pages: 5, childRequests: 4 });
    expect(stored.letters[0]).toMatchObject({ id: 'P/1', parent: 'P' });
  });

  it("writes a round's token to disk with the run's finish, even a run that found nothing", async () => {
    const stored = await runInDurableObject(freshObject(), (_instance: Poller, state) => {
      const store = new SqliteStore(state.storage);
      const running = {
        epoch: 1,
        trigger: 'cron' as const,
        held: true,
        phase: 'running' as const,
        startedAt: 1_000,
        expiresAt: 901_000,
      };
      store.acquire(0, running);
      const idle = {
        epoch: 1,
        trigger: 'cron' as const,
        outcome: 'success' as const,
        startedAt: 1_000,
        finishedAt: 2_000,
        windows: 1,
        pages: 1,
        records: 0,
        deadLettered: 0,
        error: null,
        checkpoint: 5_000,
      };
      const next = {
        failures: 0,
        wakeup: null,
        skewMs: null,
        rateLimitedUntil: null,
        stall: null,
        straggleMs: 0,
      };
      const commit = { checkpoint: 5_000, remember: [], pruneBelow: 0 };
      store.finishRun(1, idle, next, { ...commit, round: { token: 't-1', at: 2_000 } });
      return state.storage.sql
        .exec<{ token: string; checkpoint: number }>(
          'SELECT token, checkpoint FROM resume_round, poller_state',
        )
        .toArray();
    });
    expect(stored).toEqual([{ token: 't-1', checkpoint: 5_000 }]);
  });

  it('an expired token writes a resume_resync audit entry with the resync', async () => {
    const audit = await runInDurableObject(freshObject(), (_instance: Poller, state) => {
      const store = new SqliteStore(state.storage);
      const lease = { epoch: 1, trigger: 'cron' as const, held: true, startedAt: 1_000 };
      store.acquire(0, { ...lease, phase: 'running' as const, expiresAt: 901_000 });
      store.rounds.expire(1, 4_000, 'page 1: HTTP 410: the resume token expired');
      return store.audit.list(5);
    });
    expect(audit).toEqual([
      {
        at: 4_000,
        action: 'resume_resync',
        detail: { reason: 'page 1: HTTP 410: the resume token expired' },
      },
    ]);
  });

  it('applies every numbered migration once', async () => {
    const versions = await runInDurableObject(freshObject(), (_instance: Poller, state) =>
      state.storage.sql
        .exec<{ version: number }>('SELECT version FROM _migrations ORDER BY version')
        .toArray(),
    );
    expect(versions.map((row) => row.version)).toEqual(MIGRATIONS.map((_, index) => index + 1));
  });
});
