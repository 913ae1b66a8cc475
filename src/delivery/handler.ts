import { redact } from '../config/interpolate.ts';
import { withDeadline } from '../deadline.ts';
import type { DeliveryResult } from '../engine/classify.ts';
import type { Deliverer, DeliveryItem } from '../engine/ports.ts';
import type { Handler } from '../handlers/types.ts';
import type { BuildDeliverer } from './build.ts';
import { findHandler } from './find-handler.ts';
import type { HandlerConfig } from './kinds/handler.ts';

/** Builds a poller's handler deliverer: needs the registered handler; gates every call. */
export const buildHandler: BuildDeliverer<HandlerConfig> = (
  config,
  { poller, env, secrets, sender },
) => {
  const found = findHandler(config.name, 'deliver.name');
  if (!found.ok) return found;
  const gated: Handler = (record, context) => {
    sender.check();
    return found.handler(record, context);
  };
  return {
    ok: true,
    deliverer: new HandlerDeliverer(poller, config.name, gated, env, secrets, config.timeout),
  };
};

/**
 * Handler delivery: calls a registered function per record; a resolved promise is success.
 * Each call is bounded by `deliver.timeout`: one that has not settled by then is a failed
 * attempt, and its `signal` aborts so that the handler can stop what it is doing.
 */
export class HandlerDeliverer implements Deliverer {
  constructor(
    private readonly poller: string,
    private readonly name: string,
    private readonly handler: Handler,
    private readonly env: Env,
    private readonly secrets: readonly string[],
    private readonly timeout: number,
  ) {}

  async deliver(items: DeliveryItem[]): Promise<DeliveryResult> {
    for (const { update, op, idempotencyKey, attempt } of items) {
      try {
        const outcome = await withDeadline(this.timeout, (signal) =>
          this.handler(update.record, {
            op,
            poller: this.poller,
            id: update.id,
            version: update.version,
            idempotencyKey,
            attempt,
            ...(update.parent === undefined ? {} : { parent: update.parent }),
            env: this.env,
            signal,
          }),
        );
        if (outcome.timedOut) {
          return { kind: 'retry', error: `handler "${this.name}" ${outcome.error}` };
        }
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        return {
          kind: 'retry',
          error: `handler "${this.name}" threw: ${redact(message, this.secrets)}`,
        };
      }
    }
    return { kind: 'delivered' };
  }
}
