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

  it('applies every numbered migration once', async () => {
    const versions = await runInDurableObject(freshObject(), (_instance: Poller, state) =>
      state.storage.sql
        .exec<{ version: number }>('SELECT version FROM _migrations ORDER BY version')
        .toArray(),
    );
    expect(versions.map((row) => row.version)).toEqual(MIGRATIONS.map((_, index) => index + 1));
  });
});
