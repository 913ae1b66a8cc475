import * as z from 'zod';
import { requiredFor } from '../../config/fields.ts';
import { type DeliveryKind, delivering } from '../kind.ts';

const config = z.strictObject({
  type: z.literal('handler'),
  /** The name a function is registered under in src/handlers; it gets one record at a time. */
  name: requiredFor('deliver', 'handler'),
  ...delivering,
});

export type HandlerConfig = z.output<typeof config>;

/** `handler`: a function in this Worker, called once per record inside the poll run (delivery/handler.ts). */
export const handler = {
  config,
  example: [
    '[vars.POLLERS.sessions.deliver]',
    'type = "handler"',
    'name = "upsert-session"        # registered in src/handlers/index.ts',
  ].join('\n'),
  batchSize: () => 1,
  queueHandler: (table) => table.name,
  reach: (table) => [{ what: 'handler', key: 'deliver.name', name: table.name, implicit: false }],
} satisfies DeliveryKind<HandlerConfig>;
