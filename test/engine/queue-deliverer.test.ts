import { describe, expect, it } from 'vitest';
import { QUEUE_LIMITS, QueueDeliverer, type QueueMessageBody } from '../../src/delivery/queue.ts';
import type { DeliveryItem } from '../../src/engine/ports.ts';

function items(count: number, recordBytes = 10): DeliveryItem[] {
  return Array.from({ length: count }, (_, i) => ({
    op: 'upsert',
    update: {
      id: `r${i}`,
      version: '2026-01-01T00:00:00Z',
      versionMs: 0,
      record: { pad: 'x'.repeat(recordBytes) },
    },
    idempotencyKey: `p:r${i}:2026-01-01T00:00:00Z`,
    attempt: 1,
  }));
}

function producer() {
  const batches: MessageSendRequest<QueueMessageBody>[][] = [];
  return {
    batches,
    queue: {
      sendBatch: async (messages: Iterable<MessageSendRequest<QueueMessageBody>>) => {
        batches.push([...messages]);
      },
    },
  };
}

describe('queue delivery within the Queues limits', () => {
  it('sends 100 small records in one sendBatch, as { op, poller, id, version, idempotency_key, record }', async () => {
    const { batches, queue } = producer();
    const result = await new QueueDeliverer('p', 'Q', queue, 30_000).deliver(items(100));
    expect(result).toEqual({ kind: 'delivered' });
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(QUEUE_LIMITS.messages);
    expect(batches[0]?.[0]).toEqual({
      contentType: 'json',
      body: {
        op: 'upsert',
        poller: 'p',
        id: 'r0',
        version: '2026-01-01T00:00:00Z',
        idempotency_key: 'p:r0:2026-01-01T00:00:00Z',
        record: { pad: 'x'.repeat(10) },
      },
    });
  });

  it('splits a batch that would pass 256 KB', async () => {
    const { batches, queue } = producer();
    const result = await new QueueDeliverer('p', 'Q', queue, 30_000).deliver(items(10, 60_000)); // ~600 KB
    expect(result.kind).toBe('delivered');
    expect(batches.length).toBeGreaterThanOrEqual(3);
    for (const batch of batches) {
      const bytes = batch.reduce((sum, message) => sum + JSON.stringify(message.body).length, 0);
      expect(bytes).toBeLessThanOrEqual(QUEUE_LIMITS.batchBytes);
    }
    expect(batches.flat()).toHaveLength(10);
  });

  it('rejects a record over the 128 KB a message may hold (it will become a dead letter)', async () => {
    const { batches, queue } = producer();
    const result = await new QueueDeliverer('p', 'Q', queue, 30_000).deliver(items(1, 130_000));
    expect(result.kind).toBe('rejected');
    expect(batches).toHaveLength(0);
  });

  it('reports a failed sendBatch as retryable', async () => {
    const queue = { sendBatch: async () => Promise.reject(new Error('queue overloaded')) };
    const result = await new QueueDeliverer('p', 'Q', queue, 30_000).deliver(items(2));
    expect(result).toMatchObject({ kind: 'retry' });
  });
});
