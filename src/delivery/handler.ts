import { redact } from '../config/interpolate.ts';
import type { DeliveryResult } from '../engine/classify.ts';
import type { Deliverer, DeliveryItem } from '../engine/ports.ts';
import type { Handler } from '../handlers/types.ts';

/** Handler delivery: calls a registered function per record; a resolved promise is success. */
export class HandlerDeliverer implements Deliverer {
  constructor(
    private readonly poller: string,
    private readonly name: string,
    private readonly handler: Handler,
    private readonly env: Env,
    private readonly secrets: readonly string[],
  ) {}

  async deliver(items: DeliveryItem[]): Promise<DeliveryResult> {
    for (const { update, idempotencyKey, attempt } of items) {
      try {
        await this.handler(update.record, {
          poller: this.poller,
          id: update.id,
          version: update.version,
          idempotencyKey,
          attempt,
          env: this.env,
        });
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
