import * as z from 'zod';
import { redact } from '../config/interpolate.ts';
import { loadPoller, readPollersTable } from '../config/load.ts';
import { withDeadline } from '../deadline.ts';
import { backoffDelay } from '../engine/backoff.ts';
import { findHandler } from './index.ts';

const messageBody = z.object({
  poller: z.string(),
  id: z.string(),
  version: z.string(),
  idempotency_key: z.string(),
  record: z.unknown(),
});

/**
 * The consumer of `deliver.type = "queue"`: runs the poller's handler for each message,
 * bounded by `deliver.timeout`. A handler that throws or times out has its message retried
 * with backoff; after the queue's `max_retries` the message goes to its `dead_letter_queue`
 * (wrangler.toml), so nothing is dropped. Acked only on success.
 */
export async function consumeDeliveries(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  if (batch.queue.endsWith('-dlq')) return keepDeadLetters(batch, env);
  const table = readPollersTable(env.POLLERS);
  for (const message of batch.messages) {
    const retry = (error: string) => retryLater(batch.queue, message, error);
    const parsed = messageBody.safeParse(message.body);
    if (!parsed.success) {
      retry('not a tidemark delivery message');
      continue;
    }
    const body = parsed.data;
    const raw = table.ok ? table.pollers[body.poller] : undefined;
    const entry =
      raw === undefined
        ? undefined
        : loadPoller(body.poller, raw, env as unknown as Record<string, unknown>);
    if (!entry?.ok) {
      retry(`poller "${body.poller}" is not configured (or its config has errors)`);
      continue;
    }
    const { deliver } = entry.config;
    const name = deliver.type === 'webhook' ? undefined : deliver.name;
    const found = findHandler(name ?? body.poller, 'deliver.name');
    if (!found.ok) {
      retry(found.error);
      continue;
    }
    try {
      const outcome = await withDeadline(entry.config.deliver.timeout, (signal) =>
        found.handler(body.record, {
          poller: body.poller,
          id: body.id,
          version: body.version,
          idempotencyKey: body.idempotency_key,
          attempt: message.attempts,
          env,
          signal,
        }),
      );
      if (outcome.timedOut) retry(`handler ${outcome.error}`);
      else message.ack();
    } catch (error) {
      retry(redact(error instanceof Error ? error.message : String(error), entry.secrets));
    }
  }
}

/**
 * The dead-letter queue of the deliveries (a queue whose name ends in "-dlq"): each message
 * the consumer gave up on becomes a dead letter of its poller, shown in status and
 * replayable like any other (R8), instead of expiring unseen in the queue. A message is
 * acked only once its poller has stored it; otherwise (the object is unreachable or
 * failing, or the message is not one of ours) it is retried with backoff, and what still
 * fails after this consumer's `max_retries` goes to its own `dead_letter_queue`
 * (wrangler.toml) instead of being deleted.
 */
async function keepDeadLetters(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const parsed = messageBody.safeParse(message.body);
    if (!parsed.success) {
      retryLater(batch.queue, message, 'not a tidemark delivery message');
      continue;
    }
    const body = parsed.data;
    try {
      await env.POLLER.get(env.POLLER.idFromName(body.poller)).queueDeadLetter(body.poller, {
        key: body.idempotency_key,
        id: body.id,
        version: body.version,
        record: JSON.stringify(body.record ?? null),
        attempts: message.attempts,
        at: message.timestamp.getTime(),
      });
      message.ack();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      retryLater(batch.queue, message, `storing the dead letter failed: ${reason}`);
    }
  }
}

/** Retries a message after a backoff that grows with its attempts, and logs why. */
function retryLater(queue: string, message: Message<unknown>, error: string): void {
  console.log(
    JSON.stringify({
      event: 'queue_retry',
      queue,
      message: message.id,
      attempts: message.attempts,
      error,
    }),
  );
  message.retry({
    delaySeconds: Math.ceil(backoffDelay(message.attempts, Math.random) / 1000),
  });
}
