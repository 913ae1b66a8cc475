import * as z from 'zod';
import { duration } from '../config/fields.ts';
import type { Reached } from '../config/reach.ts';

/** The keys every kind's table has: the engine and the lease rule read them. */
export interface Delivering {
  type: string;
  timeout: number;
  concurrency: number;
  changes_only: boolean;
  changes_ignore: string[];
}

/**
 * One delivery kind: where a poller's updates go. Every kind is declared in one module
 * (src/delivery/kinds/<name>.ts) registered in kinds/index.ts, and built by one function
 * beside its deliverer (registered in delivery/index.ts); the shared case suite
 * (test/engine/delivery-kinds.test.ts) runs the same cases against each. The declaration is
 * pure (zod and strings): the config schema, and so `npm run check-config` in plain Node,
 * load it without the Workers runtime the deliverers need.
 */
export interface DeliveryKind<C extends Delivering> {
  /** Its `deliver` table: a strict zod object whose `type` is the kind's name, with `...delivering`. */
  readonly config: z.ZodType<C>;
  /** The table docs/delivery.md shows for it (a test checks it is there and valid). */
  readonly example: string;
  /** The most records one send takes: the engine batches a page's updates by it. */
  batchSize(config: C): number;
  /**
   * The handler the queue consumer runs for this poller's messages: what it sends to a
   * queue, and also messages queued before its `deliver` changed to this kind.
   */
  queueHandler(config: C, poller: string): string;
  /** What it reaches outside the Worker, for FLEET_POLICY (config/fleet-reach.ts). */
  reach(config: C, poller: string): Reached[];
}

/** What every delivery kind's table has. */
export const delivering = {
  /** Per delivery timeout, every kind (default 30s). */
  timeout: duration.default(30_000),
  /** Deliveries in flight at once (default 6: the Workers limit on simultaneous outbound connections). */
  concurrency: z.int().min(1).max(50).default(6),
  /** Skip a newer version whose content is the one last delivered (default false). */
  changes_only: z.boolean().default(false),
  /** Dot paths left out of that comparison, e.g. ["updated_at", "etag"] (default none). */
  changes_ignore: z.array(z.string().min(1)).default([]),
};

/** Records per request (webhook) or per sendBatch (queue), 1 to 100 (default 1). */
export const batch = z.int().min(1).max(100).default(1);
