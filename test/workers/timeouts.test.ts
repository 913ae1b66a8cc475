import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HandlerDeliverer } from '../../src/delivery/handler.ts';
import { QueueDeliverer } from '../../src/delivery/queue.ts';
import { WebhookDeliverer } from '../../src/delivery/webhook.ts';
import type { DeliveryItem } from '../../src/engine/ports.ts';
import type { HandlerContext } from '../../src/handlers/types.ts';
import worker from '../../src/index.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { handlers } from '../support/worker.ts';
import { type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;

beforeEach(() => {
  ({ upstream } = installFakes());
});

const item = (n: number): DeliveryItem => ({
  update: { id: `r${n}`, version: '2026-11-01T00:00:00.000Z', versionMs: 0, record: { n } },
  op: 'upsert',
  idempotencyKey: `p:r${n}:2026-11-01T00:00:00.000Z`,
  attempt: 1,
});

const webhookConfig = {
  type: 'webhook' as const,
  url: 'https://receiver.test/hooks',
  secret: TEST_SECRETS.WEBHOOK_SECRET,
  batch: 1,
  concurrency: 6,
  changes_only: false,
  changes_ignore: [],
};

/** Settles only when its signal aborts, as a well-behaved slow dependency does. */
function untilAborted(signal: AbortSignal | undefined): Promise<never> {
  // Without a signal (a handler called with none) it never settles at all.
  return new Promise((_resolve, reject) => {
    signal?.addEventListener('abort', () => reject(signal.reason));
  });
}

describe('deliver.timeout bounds every delivery kind', () => {
  describe('with a handler slower than the timeout', () => {
    const original = handlers['demo-sessions'];
    const calls: HandlerContext[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    beforeEach(() => {
      calls.length = 0;
      inFlight = 0;
      maxInFlight = 0;
      handlers['demo-sessions'] = async (_record, context) => {
        calls.push(context);
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          await untilAborted(context.signal);
        } finally {
          inFlight -= 1;
        }
      };
    });
    afterEach(() => {
      if (original) handlers['demo-sessions'] = original;
    });

    it('fails the attempt after deliver.timeout and ends the run inside its lease, so two handler calls are never in flight', async () => {
      const poller = newPoller('slow_handler'); // max_run 1m, lease_ttl 2m, timeout 250ms
      const start = Date.now() - 10 * MINUTE;
      await poller.setCheckpoint(start);
      upstream.add('sess_slow', start + MINUTE);

      await poller.tick(); // comes back only once the run has ended

      const status = await poller.status();
      // The attempt failed and the update is stored to be retried (R19): the run is partial.
      expect(status.last_run?.outcome).toBe('partial');
      expect(status.last_run?.error).toContain('handler "demo-sessions" timed out after 250ms');
      expect(status.lease.held).toBe(false);
      expect(await poller.checkpoint()).toBeGreaterThan(start + MINUTE);
      expect(
        await poller.sql<{ id: string; attempts: number }>(
          'SELECT id, attempts FROM delivery_failures',
        ),
      ).toEqual([{ id: 'sess_slow', attempts: 1 }]);
      expect(calls[0]?.signal.aborted).toBe(true);

      await poller.retryNow();
      expect(calls.map((call) => call.attempt)).toEqual([1, 2]);
      expect(maxInFlight).toBe(1);
    });

    it('retries a queue message whose handler outlives deliver.timeout, instead of holding the batch', async () => {
      const message = {
        id: 'm-slow',
        timestamp: new Date(),
        attempts: 1,
        body: {
          poller: 'slow_queue', // its consumer gives the handler 250ms
          id: 'slow',
          version: '2026-11-01T00:00:00.000Z',
          idempotency_key: 'slow_queue:slow:2026-11-01T00:00:00.000Z',
          record: { id: 'slow' },
        },
      };
      const batch = createMessageBatch('tidemark-deliveries', [message]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env, ctx);
      const result = await getQueueResult(batch, ctx);
      expect(result.explicitAcks).toEqual([]);
      expect(result.retryMessages.map((m) => m.msgId)).toEqual(['m-slow']);
      expect(calls[0]?.signal.aborted).toBe(true);
    });
  });

  it('fails a webhook request the receiver has not answered by the timeout, and aborts it', async () => {
    let signal: AbortSignal | undefined;
    const deliverer = new WebhookDeliverer(
      'p',
      { ...webhookConfig, timeout: 100 },
      (request) => {
        signal = request.signal;
        return untilAborted(request.signal);
      },
      [],
      Date.now,
    );
    expect(await deliverer.deliver([item(1)])).toEqual({
      kind: 'retry',
      error: 'POST https://receiver.test/hooks: timed out after 100ms',
    });
    expect(signal?.aborted).toBe(true);
  });

  it('fails a queue sendBatch that has not returned by the timeout, keeping the parts sent before it', async () => {
    let sends = 0;
    const queue = {
      sendBatch: async () => {
        sends += 1;
        if (sends === 2) await untilAborted(undefined); // the second part hangs
      },
    };
    const items = Array.from({ length: 150 }, (_, n) => item(n)); // two parts: 100 + 50
    const result = await new QueueDeliverer('p', 'DELIVERY_QUEUE', queue, 100).deliver(items);
    expect(result).toEqual({
      kind: 'retry',
      error: 'queue DELIVERY_QUEUE: sendBatch timed out after 100ms',
      deliveredPrefix: 100,
    });
  });

  it("clears every delivery's timer, so a long run never reaches workerd's 10,000 active timeouts", async () => {
    const deliverers = {
      webhook: new WebhookDeliverer(
        'p',
        { ...webhookConfig, timeout: 30_000 },
        async () => new Response(null, { status: 204 }),
        [],
        Date.now,
      ),
      handler: new HandlerDeliverer('p', 'fast', async () => {}, env, [], 30_000),
      queue: new QueueDeliverer('p', 'DELIVERY_QUEUE', { sendBatch: async () => {} }, 30_000),
    };
    for (const [kind, deliverer] of Object.entries(deliverers)) {
      const failures: string[] = [];
      for (let n = 0; n < 10_001; n += 1) {
        const result = await deliverer.deliver([item(n)]);
        if (result.kind !== 'delivered') failures.push(`${n}: ${result.error}`);
      }
      expect(failures.slice(0, 1), kind).toEqual([]);
    }
  });
});
