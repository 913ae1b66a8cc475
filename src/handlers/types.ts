import type { DeliveryOp } from '../engine/ports.ts';

/** What a handler is told about the update it handles. */
export interface HandlerContext {
  /** `upsert`, or `delete`: the upstream deleted the record (a tombstone, R15). */
  op: DeliveryOp;
  poller: string;
  id: string;
  /** The record's updated_at as the upstream reports it. */
  version: string;
  /**
   * `<poller>:<id>:<version>` (a `%` or `:` in the id percent-encoded): store it, or use it,
   * to make the handler idempotent.
   */
  idempotencyKey: string;
  /** 1 for the first attempt at this update. */
  attempt: number;
  /** source.children: the id of the parent record this one was listed under. */
  parent?: string;
  /** The Worker's bindings (D1, KV, queues, secrets…). */
  env: Env;
  /**
   * Aborts when the call outlives `deliver.timeout`: the attempt has failed by then, and
   * work the handler goes on with overlaps the retry. Pass it to `fetch` and the like.
   */
  signal: AbortSignal;
}

/**
 * A delivery handler: resolve to report success; throw (or reject) to fail the update, which
 * is retried by the next run. Must be idempotent: an update can arrive more than once.
 */
export type Handler = (record: unknown, context: HandlerContext) => Promise<void>;
