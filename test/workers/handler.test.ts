import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HandlerContext } from '../../src/handlers/types.ts';
import { handlers } from '../support/worker.ts';
import { type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;

beforeEach(() => {
  ({ upstream } = installFakes());
});

describe('handler delivery', () => {
  it('upserts each session into D1 through the registered demo handler, keeping the newest version', async () => {
    const poller = newPoller('handled');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    upstream.add('sess_h1', start + MINUTE);
    upstream.add('sess_h1', start + 2 * MINUTE);
    upstream.add('sess_h2', start + 3 * MINUTE);

    await poller.tick();

    const rows = await env.DB.prepare(
      "SELECT id, updated_at_ms FROM sessions WHERE id IN ('sess_h1', 'sess_h2') ORDER BY id",
    ).all();
    expect(rows.results).toEqual([
      { id: 'sess_h1', updated_at_ms: start + 2 * MINUTE },
      { id: 'sess_h2', updated_at_ms: start + 3 * MINUTE },
    ]);
    const versions = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM session_versions WHERE id IN ('sess_h1', 'sess_h2')",
    ).first<{ n: number }>();
    expect(versions?.n).toBe(3);
  });

  describe('with a handler that throws', () => {
    const calls: HandlerContext[] = [];
    let failuresLeft = 1;
    beforeEach(() => {
      calls.length = 0;
      failuresLeft = 1;
      handlers['demo-sessions-original'] = handlers['demo-sessions'] ?? (async () => {});
      handlers['demo-sessions'] = async (_record, context) => {
        calls.push(context);
        if (failuresLeft > 0) {
          failuresLeft -= 1;
          throw new Error('database is locked');
        }
      };
    });
    afterEach(() => {
      handlers['demo-sessions'] = handlers['demo-sessions-original'] ?? (async () => {});
      delete handlers['demo-sessions-original'];
    });

    it('stores the update the handler threw on, moves C on, and delivers it on the retry with its idempotency key', async () => {
      const poller = newPoller('handled');
      const start = Date.now() - 10 * MINUTE;
      await poller.setCheckpoint(start);
      const update = upstream.add('sess_x', start + MINUTE);

      await poller.tick();
      const partial = await poller.status();
      expect(partial.last_run?.outcome).toBe('partial');
      expect(partial.last_run?.error).toContain(
        'handler "demo-sessions" threw: database is locked',
      );
      // R19: stored with its record, the failing update does not hold C back.
      expect(await poller.checkpoint()).toBeGreaterThan(start + MINUTE);
      expect(
        await poller.sql<{ id: string; attempts: number }>(
          'SELECT id, attempts FROM delivery_failures',
        ),
      ).toEqual([{ id: 'sess_x', attempts: 1 }]);

      await poller.retryNow();
      expect((await poller.status()).last_run?.outcome).toBe('success');
      expect(await poller.sql('SELECT key FROM delivery_failures')).toEqual([]);
      expect(calls).toHaveLength(2);
      expect(calls[1]).toMatchObject({
        poller: 'handled',
        id: 'sess_x',
        version: update.updatedAt,
        idempotencyKey: `handled:sess_x:${update.updatedAt}`,
        attempt: 2,
      });
      expect(calls[1]?.env.DB).toBeDefined();
    });
  });
});
