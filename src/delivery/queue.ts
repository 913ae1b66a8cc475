import { withDeadline } from '../deadline.ts';
import type { DeliveryResult } from '../engine/classify.ts';
import type { Deliverer, DeliveryItem, DeliveryOp } from '../engine/ports.ts';
import type { BuildDeliverer } from './build.ts';
import { findHandler } from './find-handler.ts';
import { type QueueConfig, queue } from './kinds/queue.ts';

/** The body of one queue message. */
export interface QueueMessageBody {
  /** `upsert`, or `delete` for a tombstone (R15); absent in messages older than the field. */
  op?: DeliveryOp;
  poller: string;
  /** A runtime poller's incarnation (R14): the consumer drops what a deleted one sent. */
  incarnation?: number;
  id: string;
  version: string;
  idempotency_key: string;
  /** source.children: the id of the parent record this one was listed under. */
  parent?: string;
  record: unknown;
}

/** Cloudflare Queues limits: 100 messages and 256 KB per sendBatch, 128 KB per message. */
export const QUEUE_LIMITS = { messages: 100, batchBytes: 256_000, messageBytes: 128_000 } as const;

/** The producer side of a Queue binding, as much of it as delivery needs. */
export interface QueueProducer {
  sendBatch(messages: Iterable<MessageSendRequest<QueueMessageBody>>): Promise<void>;
}

/**
 * Builds a poller's queue deliverer: needs the producer binding and the handler its consumer
 * will run; gates every sendBatch, and its messages carry the sender's incarnation.
 */
export const buildQueue: BuildDeliverer<QueueConfig> = (config, { poller, bindings, sender }) => {
  const producer = bindings[config.binding];
  if (!isQueue(producer)) {
    return {
      ok: false,
      error: `deliver.binding: no queue producer "${config.binding}" in wrangler.toml ([[queues.producers]])`,
    };
  }
  const consumer = findHandler(
    queue.queueHandler(config, poller),
    'deliver.name (the handler the queue consumer runs)',
  );
  if (!consumer.ok) return consumer;
  const gated: QueueProducer = {
    sendBatch: (messages) => {
      sender.check();
      return producer.sendBatch(messages);
    },
  };
  return {
    ok: true,
    deliverer: new QueueDeliverer(
      poller,
      config.binding,
      gated,
      config.timeout,
      sender.incarnation,
    ),
  };
};

function isQueue(value: unknown): value is QueueProducer {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as QueueProducer).sendBatch === 'function'
  );
}

/**
 * Queue delivery: one `sendBatch` per batch of records (split further to stay within the
 * Queues limits); success is the batch being accepted. A consumer in this Worker (the
 * `queue()` handler) then runs the handler for each message, retrying on its own. The
 * sends of one batch are bounded by `deliver.timeout` together, like one webhook request.
 */
export class QueueDeliverer implements Deliverer {
  constructor(
    private readonly poller: string,
    private readonly binding: string,
    private readonly queue: QueueProducer,
    private readonly timeout: number,
    /** A runtime poller's incarnation, carried by each message (0: a static poller). */
    private readonly incarnation = 0,
  ) {}

  async deliver(items: DeliveryItem[]): Promise<DeliveryResult> {
    const messages = items.map(({ update, op, idempotencyKey }) => {
      const body: QueueMessageBody = {
        op,
        poller: this.poller,
        ...(this.incarnation > 0 ? { incarnation: this.incarnation } : {}),
        id: update.id,
        version: update.version,
        idempotency_key: idempotencyKey,
        ...(update.parent === undefined ? {} : { parent: update.parent }),
        record: update.record,
      };
      return { body, bytes: new TextEncoder().encode(JSON.stringify(body)).length };
    });
    const tooBig = messages.find((message) => message.bytes > QUEUE_LIMITS.messageBytes);
    if (tooBig) {
      return {
        kind: 'rejected',
        error: `queue ${this.binding}: the message for ${tooBig.body.id}@${tooBig.body.version} is ${tooBig.bytes} bytes, over the 128 KB a queue message may hold`,
      };
    }
    let sent = 0;
    try {
      const outcome = await withDeadline(this.timeout, async (signal) => {
        for (const part of splitBySize(messages)) {
          if (signal.aborted) return;
          await this.queue.sendBatch(
            part.map((message) => ({ body: message.body, contentType: 'json' })),
          );
          sent += part.length;
        }
      });
      if (!outcome.timedOut) return { kind: 'delivered' };
      // The parts accepted before the deadline are delivered; only the rest is retried.
      const error = `queue ${this.binding}: sendBatch ${outcome.error}`;
      return { kind: 'retry', error, deliveredPrefix: sent };
    } catch (error) {
      // The parts already accepted are delivered; only the rest is retried.
      const message = `queue ${this.binding}: sendBatch failed: ${String(error)}`;
      return { kind: 'retry', error: message, deliveredPrefix: sent };
    }
  }
}

/** Consecutive parts of at most 100 messages and 256 KB each. */
function splitBySize<T extends { bytes: number }>(messages: T[]): T[][] {
  const parts: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const message of messages) {
    if (
      current.length === QUEUE_LIMITS.messages ||
      bytes + message.bytes > QUEUE_LIMITS.batchBytes
    ) {
      parts.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += message.bytes;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}
