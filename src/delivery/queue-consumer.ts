import * as z from 'zod';
import {
  type CatalogEntry,
  findPoller,
  type PollerSettings,
  pollerObject,
  pollerSettings,
  STATIC_INCARNATION,
} from '../catalog.ts';
import { redact } from '../config/interpolate.ts';
import { withDeadline } from '../deadline.ts';
import { backoffDelay } from '../engine/backoff.ts';
import { findHandler } from './find-handler.ts';
import { kindOf } from './kinds/index.ts';

const messageBody = z.object({
  poller: z.string(),
  incarnation: z.number().int().optional(),
  op: z.enum(['upsert', 'delete']).optional(),
  id: z.string(),
  version: z.string(),
  idempotency_key: z.string(),
  parent: z.string().optional(),
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
  // Each poller of the batch looked up once, static or runtime, through the catalog.
  const settings = new Map<string, Promise<PollerSettings>>();
  const settingsOf = (poller: string) => {
    let found = settings.get(poller);
    if (found === undefined) {
      found = pollerSettings(env, poller);
      settings.set(poller, found);
    }
    return found;
  };
  for (const message of batch.messages) {
    const retry = (error: string) => retryLater(batch.queue, message, error);
    const parsed = messageBody.safeParse(message.body);
    if (!parsed.success) {
      retry('not a tidemark delivery message');
      continue;
    }
    const body = parsed.data;
    const entry = await settingsOf(body.poller);
    if (isGone(entry.entry, body.incarnation)) {
      // R14: its poller was deleted (and maybe created again): nothing of a deleted poller is
      // delivered once DELETE has answered.
      drop(batch.queue, message, `poller "${body.poller}" was deleted`);
      continue;
    }
    if (!entry.ok) {
      retry(`poller "${body.poller}" is not configured (or its config has errors)`);
      continue;
    }
    const { deliver } = entry.config;
    const found = findHandler(kindOf(deliver).queueHandler(deliver, body.poller), 'deliver.name');
    if (!found.ok) {
      retry(found.error);
      continue;
    }
    try {
      const outcome = await withDeadline(entry.config.deliver.timeout, (signal) =>
        found.handler(body.record, {
          op: body.op ?? 'upsert',
          poller: body.poller,
          id: body.id,
          version: body.version,
          idempotencyKey: body.idempotency_key,
          attempt: message.attempts,
          ...(body.parent === undefined ? {} : { parent: body.parent }),
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

/** A message whose poller is gone: no such poller now, or another incarnation of its name. */
function isGone(entry: CatalogEntry | null, incarnation: number | undefined): boolean {
  if (entry === null) return true;
  return incarnation !== undefined && entry.kind === 'runtime' && entry.incarnation !== incarnation;
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
      const entry = await findPoller(env, body.poller);
      if (entry === null || isGone(entry, body.incarnation)) {
        drop(batch.queue, message, `poller "${body.poller}" was deleted`);
        continue;
      }
      // Meant for the incarnation that sent it: an object erased (or created again) since the
      // lookup above refuses it, and the message is dropped as above (R14).
      const meant =
        body.incarnation ?? (entry.kind === 'runtime' ? entry.incarnation : STATIC_INCARNATION);
      const kept = await pollerObject(env, body.poller).queueDeadLetter(meant, {
        key: body.idempotency_key,
        id: body.id,
        version: body.version,
        record: JSON.stringify(body.record ?? null),
        attempts: message.attempts,
        at: message.timestamp.getTime(),
        ...(body.parent === undefined ? {} : { parent: body.parent }),
      });
      if (kept.outcome === 'refused') drop(batch.queue, message, kept.error);
      else message.ack();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      retryLater(batch.queue, message, `storing the dead letter failed: ${reason}`);
    }
  }
}

/** Acks a message that has nowhere to go, and says so in the log. */
function drop(queue: string, message: Message<unknown>, reason: string): void {
  console.log(JSON.stringify({ event: 'queue_dropped', queue, message: message.id, reason }));
  message.ack();
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
