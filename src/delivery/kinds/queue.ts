import * as z from 'zod';
import { requiredFor } from '../../config/fields.ts';
import { batch, type DeliveryKind, delivering } from '../kind.ts';

const config = z.strictObject({
  type: z.literal('queue'),
  /** The [[queues.producers]] binding name. */
  binding: requiredFor('deliver', 'queue'),
  /** The handler the consumer runs (default: the poller's name). */
  name: z.string().min(1).optional(),
  batch,
  ...delivering,
});

export type QueueConfig = z.output<typeof config>;

/** `queue`: one sendBatch per batch; the Worker's queue() consumer runs the handler (delivery/queue.ts). */
export const queue = {
  config,
  example: [
    '[vars.POLLERS.sessions.deliver]',
    'type = "queue"',
    'binding = "DELIVERY_QUEUE"     # a [[queues.producers]] binding',
    'name = "upsert-session"        # the handler the consumer runs (default: the poller\'s name)',
    'batch = 100                    # records per sendBatch (the Queues limit is 100 and 256 KB)',
  ].join('\n'),
  batchSize: (table) => table.batch,
  queueHandler: (table, poller) => table.name ?? poller,
  reach: (table, poller) => [
    { what: 'binding', key: 'deliver.binding', name: table.binding, noun: 'queue' },
    // The queue's consumer runs `deliver.name`, or the handler named like the poller.
    {
      what: 'handler',
      key: 'deliver.name',
      name: table.name ?? poller,
      implicit: table.name === undefined,
    },
  ],
} satisfies DeliveryKind<QueueConfig>;
