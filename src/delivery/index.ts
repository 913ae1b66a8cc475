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

/** Which life of the poller sends (R14). */
export interface Sender {
  /** The runtime incarnation (0 for a static poller): queue messages carry it. */
  incarnation: number;
  /** Called right before each send (a request, a sendBatch, a handler call): throws once the life ended. */
  check: () => void;
}

const ALWAYS: Sender = { incarnation: 0, check: () => {} };

/** Builds the deliverer a poller's `deliver` table asks for, or says what is missing. */
export function createDeliverer(
  poller: string,
  config: DeliverConfig,
  env: Env,
  fetcher: HttpFetch,
  secrets: readonly string[],
  now: () => number,
  sender: Sender = ALWAYS,
): DelivererOrError {
  const gate = sender.check;
  switch (config.type) {
    case 'webhook': {
      const secretProblem = signingSecretProblem(config.secret);
      if (secretProblem !== undefined) {
        return { ok: false, error: `deliver.secret: ${secretProblem}` };
      }
      const gated: HttpFetch = (request) => {
        gate();
        return fetcher(request);
      };
      return { ok: true, deliverer: new WebhookDeliverer(poller, config, gated, secrets, now) };
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
        deliverer: new QueueDeliverer(
          poller,
          config.binding,
          {
            sendBatch: (messages) => {
              gate();
              return queue.sendBatch(messages);
            },
          },
          config.timeout,
          sender.incarnation,
        ),
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
          (record, context) => {
            gate();
            return found.handler(record, context);
          },
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
