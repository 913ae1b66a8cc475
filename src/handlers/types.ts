/** What a handler is told about the update it handles. */
export interface HandlerContext {
  poller: string;
  id: string;
  /** The record's updated_at as the upstream reports it. */
  version: string;
  /** `<poller>:<id>:<version>`: store it, or use it, to make the handler idempotent. */
  idempotencyKey: string;
  /** 1 for the first attempt at this update. */
  attempt: number;
  /** The Worker's bindings (D1, KV, queues, secrets…). */
  env: Env;
}

/**
 * A delivery handler: resolve to report success; throw (or reject) to fail the update, which
 * is retried by the next run. Must be idempotent: an update can arrive more than once.
 */
export type Handler = (record: unknown, context: HandlerContext) => Promise<void>;
