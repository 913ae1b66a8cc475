import type { DeliverConfig } from '../config/schema.ts';
import type { Deliverer } from '../engine/ports.ts';
import { handlers } from '../handlers/index.ts';
import type { Handler } from '../handlers/types.ts';
import type { HttpFetch } from '../sources/http-source.ts';
import { HandlerDeliverer } from './handler.ts';
import { QueueDeliverer, type QueueProducer } from './queue.ts';
import { signingSecretProblem } from './standard-webhooks.ts';
import { WebhookDeliverer } from './webhook.ts';

export type DelivererOrError = { ok: true; deliverer: Deliverer } | { ok: false; error: string };

/** Builds the deliverer a poller's `deliver` table asks for, or says what is missing. */
export function createDeliverer(
  poller: string,
  config: DeliverConfig,
  env: Env,
  fetcher: HttpFetch,
  secrets: readonly string[],
  now: () => number,
): DelivererOrError {
  switch (config.type) {
    case 'webhook': {
      const secretProblem = signingSecretProblem(config.secret);
      if (secretProblem !== undefined) {
        return { ok: false, error: `deliver.secret: ${secretProblem}` };
      }
      return { ok: true, deliverer: new WebhookDeliverer(poller, config, fetcher, secrets, now) };
    }
    case 'queue': {
      const queue = (env as unknown as Record<string, unknown>)[config.binding];
      if (!isQueue(queue)) {
        return {
          ok: false,
          error: `deliver.binding: no queue producer "${config.binding}" in wrangler.toml ([[queues.producers]])`,
        };
      }
      const consumer = findHandler(
        config.name ?? poller,
        'deliver.name (the handler the queue consumer runs)',
      );
      if (!consumer.ok) return consumer;
      return {
        ok: true,
        deliverer: new QueueDeliverer(poller, config.binding, queue, config.timeout),
      };
    }
    case 'handler': {
      const found = findHandler(config.name, 'deliver.name');
      if (!found.ok) return found;
      return {
        ok: true,
        deliverer: new HandlerDeliverer(
          poller,
          config.name,
          found.handler,
          env,
          secrets,
          config.timeout,
        ),
      };
    }
  }
}

/** A handler from the registry, or an error naming the ones there are. */
export function findHandler(
  name: string,
  key: string,
): { ok: true; handler: Handler } | { ok: false; error: string } {
  const handler = handlers[name];
  if (handler) return { ok: true, handler };
  const known = Object.keys(handlers).join(', ') || 'none';
  return {
    ok: false,
    error: `${key}: no handler "${name}" is registered in src/handlers (registered: ${known})`,
  };
}

function isQueue(value: unknown): value is QueueProducer {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as QueueProducer).sendBatch === 'function'
  );
}
