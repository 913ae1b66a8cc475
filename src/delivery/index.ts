import type { DeliverConfig } from '../config/schema.ts';
import { envValues } from '../env-values.ts';
import type { HttpFetch } from '../sources/http-source.ts';
import type { BuildDeliverer, DelivererOrError, Sender } from './build.ts';
import { buildHandler } from './handler.ts';
import { type DeliverConfigOf, type DeliverType, kindOf } from './kinds/index.ts';
import { buildQueue } from './queue.ts';
import { buildWebhook } from './webhook.ts';

export type { DelivererOrError, Sender } from './build.ts';
export { findHandler } from './find-handler.ts';

/** How each kind's deliverer is built: one per kind of src/delivery/kinds, or it does not compile. */
const builders = {
  webhook: buildWebhook,
  queue: buildQueue,
  handler: buildHandler,
} satisfies { [K in DeliverType]: BuildDeliverer<DeliverConfigOf<K>> };

const ALWAYS: Sender = { incarnation: 0, check: () => {} };

/**
 * Builds the deliverer a poller's `deliver` table asks for, or says what is missing. Every
 * send goes through `sender.check()` first; the deliverer's `batch` (what the engine batches
 * by) is what its kind says.
 */
export function createDeliverer(
  poller: string,
  config: DeliverConfig,
  env: Env,
  fetcher: HttpFetch,
  secrets: readonly string[],
  now: () => number,
  sender: Sender = ALWAYS,
): DelivererOrError {
  // Sound: `builders` is checked key by key against the kind of table each one takes.
  const build = builders[config.type] as BuildDeliverer<DeliverConfig>;
  const made = build(config, {
    poller,
    env,
    bindings: envValues(env),
    fetcher,
    secrets,
    now,
    sender,
  });
  if (!made.ok) return made;
  const { deliverer } = made;
  return {
    ok: true,
    deliverer: {
      batch: kindOf(config).batchSize(config),
      deliver: (items) => deliverer.deliver(items),
    },
  };
}
