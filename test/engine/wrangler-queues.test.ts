import { describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';

interface Consumer {
  queue: string;
  max_retries?: number;
  dead_letter_queue?: string;
}

describe('wrangler.toml: the queues this Worker consumes', () => {
  it('retries every message before giving up, and gives up into a dead-letter queue, never by deleting it', () => {
    const consumers: Consumer[] =
      unstable_readConfig({ config: 'wrangler.toml' }).queues.consumers ?? [];
    expect(consumers.map((consumer) => consumer.queue).sort()).toEqual([
      'tidemark-deliveries',
      'tidemark-deliveries-dlq',
    ]);
    for (const consumer of consumers) {
      expect(consumer.max_retries, consumer.queue).toBeGreaterThan(0);
      expect(consumer.dead_letter_queue, consumer.queue).toBeDefined();
      expect(consumer.dead_letter_queue, consumer.queue).not.toBe(consumer.queue);
    }
    // Storing a dead letter gets as many retries as Queues allows.
    const dlq = consumers.find((consumer) => consumer.queue === 'tidemark-deliveries-dlq');
    expect(dlq?.max_retries).toBe(100);
  });
});
