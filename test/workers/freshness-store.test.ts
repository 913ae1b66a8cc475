import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { emptyHistogram, observe } from '../../src/engine/lateness-histogram.ts';
import type { Poller } from '../../src/poller/durable-object.ts';
import { SqliteFreshness } from '../../src/poller/freshness-store.ts';
import { freshnessContract } from '../contract/freshness-contract.ts';

const freshObject = () => env.POLLER.get(env.POLLER.idFromName(`t-${crypto.randomUUID()}`));

describe('SqliteFreshness honours the freshness contract', () => {
  for (const [name, check] of Object.entries(freshnessContract)) {
    it(name, () =>
      runInDurableObject(freshObject(), (_instance: Poller, state) =>
        check(new SqliteFreshness(state.storage)),
      ),
    );
  }

  it('keeps at most 25 histogram rows (24 hours and all time) however long it measures', async () => {
    const rows = await runInDurableObject(freshObject(), (_instance: Poller, state) => {
      const store = new SqliteFreshness(state.storage);
      const histogram = emptyHistogram();
      observe(histogram, 2_000);
      const start = Date.parse('2026-06-01T00:00:00Z');
      for (let hour = 0; hour < 24 * 30; hour += 1)
        store.recordLateness(start + hour * 3_600_000, {
          histogram,
          nearMiss: null,
          coverage: null,
        });
      return state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM lateness').one().n;
    });
    expect(rows).toBe(25);
  });
});
