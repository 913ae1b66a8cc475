import * as z from 'zod';
import { requiredFor } from '../../config/fields.ts';
import { batch, type DeliveryKind, delivering } from '../kind.ts';

const config = z.strictObject({
  type: z.literal('webhook'),
  /** The receiver's URL. */
  url: z.url({ protocol: /^https?$/, error: 'is required when deliver.type = "webhook"' }),
  /** Standard Webhooks signing secret ("whsec_…"), usually "${WEBHOOK_SECRET}". */
  secret: requiredFor('deliver', 'webhook'),
  batch,
  ...delivering,
});

export type WebhookConfig = z.output<typeof config>;

/** `webhook`: a signed POST per record, or per batch of `batch` records (delivery/webhook.ts). */
export const webhook = {
  config,
  example: [
    '[vars.POLLERS.sessions.deliver]',
    'type = "webhook"',
    'url = "https://example.com/hooks/sessions"',
    'secret = "${WEBHOOK_SECRET}"   # "whsec_" + base64 of at least 24 random bytes',
    'batch = 1                      # or up to 100 records per request',
    'timeout = "30s"',
  ].join('\n'),
  batchSize: (table) => table.batch,
  // A webhook poller queues nothing; messages from before it was one run the queue's default.
  queueHandler: (_table, poller) => poller,
  reach: (table) => [{ what: 'url', key: 'deliver.url', url: table.url }],
} satisfies DeliveryKind<WebhookConfig>;
