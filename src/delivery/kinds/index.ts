import * as z from 'zod';
import type { Delivering, DeliveryKind } from '../kind.ts';
import { handler } from './handler.ts';
import { queue } from './queue.ts';
import { webhook } from './webhook.ts';

/**
 * Every delivery kind, by its `deliver.type`. A new kind is a declaration here, a builder
 * beside its deliverer (registered in delivery/index.ts: the compiler asks for it), and its
 * cases in test/support/delivery-kinds.ts.
 */
const kinds = { webhook, queue, handler };

/** A `deliver.type`. */
export type DeliverType = keyof typeof kinds;

/** The kinds, each checked against the interface and against the name it is registered under. */
export const deliveryKinds = kinds satisfies {
  [K in DeliverType]: DeliveryKind<Delivering & { type: K }>;
};

type KindConfig = (typeof deliveryKinds)[DeliverType]['config'];

/** Where each record goes, one shape per `type` (each kind's own table). */
export const deliverSchema = z.discriminatedUnion(
  'type',
  Object.values(deliveryKinds).map((kind) => kind.config) as [KindConfig, ...KindConfig[]],
);

/** A `deliver` table, parsed. */
export type DeliverConfig = z.output<typeof deliverSchema>;

/** The `deliver` table of one kind. */
export type DeliverConfigOf<K extends DeliverType> = Extract<DeliverConfig, { type: K }>;

/** The kind a `deliver` table asks for. */
export function kindOf(config: DeliverConfig): DeliveryKind<DeliverConfig> {
  return deliveryKinds[config.type];
}
