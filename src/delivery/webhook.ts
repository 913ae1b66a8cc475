import { redact } from '../config/interpolate.ts';
import type { DeliverConfig } from '../config/schema.ts';
import { classifyDeliveryStatus, type DeliveryResult } from '../engine/classify.ts';
import type { Deliverer, DeliveryContext, Update } from '../engine/ports.ts';
import type { HttpFetch } from '../sources/http-source.ts';
import { signWebhook } from './standard-webhooks.ts';

/** The JSON body of one webhook delivery. */
export interface WebhookBody {
  poller: string;
  id: string;
  version: string;
  record: unknown;
}

/** Webhook delivery: one signed POST per update; 2xx is success (classification in SEMANTICS.md). */
export class WebhookDeliverer implements Deliverer {
  constructor(
    private readonly poller: string,
    private readonly config: DeliverConfig & { url: string; secret: string },
    private readonly fetcher: HttpFetch,
    private readonly secrets: readonly string[],
    private readonly now: () => number,
  ) {}

  async deliver(update: Update, context: DeliveryContext): Promise<DeliveryResult> {
    const body = JSON.stringify({
      poller: this.poller,
      id: update.id,
      version: update.version,
      record: update.record,
    } satisfies WebhookBody);
    const timestamp = Math.floor(this.now() / 1000);
    const shown = `POST ${redact(this.config.url, this.secrets)}`;
    try {
      const response = await this.fetcher(
        new Request(this.config.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': context.idempotencyKey,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': await signWebhook(
              this.config.secret,
              context.idempotencyKey,
              timestamp,
              body,
            ),
          },
          body,
          signal: AbortSignal.timeout(this.config.timeout),
        }),
      );
      const text = response.ok ? '' : await response.text().catch(() => '');
      const error = `${shown}: HTTP ${response.status}; body ${JSON.stringify(redact(text, this.secrets).slice(0, 200))}`;
      return classifyDeliveryStatus(response.status, error);
    } catch (error) {
      const reason =
        error instanceof Error && error.name === 'TimeoutError' ? 'timed out' : String(error);
      return { kind: 'retry', error: `${shown}: ${redact(reason, this.secrets)}` };
    }
  }
}
