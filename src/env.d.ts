/** The Worker's bindings, as declared in wrangler.toml, plus its secrets. */
interface Env {
  POLLER: DurableObjectNamespace<import('./poller/durable-object.ts').Poller>;
  DEMO_UPSTREAM: DurableObjectNamespace<import('./demo/upstream.ts').DemoUpstream>;
  /** Which pollers exist (static and runtime), without waking them. */
  REGISTRY: DurableObjectNamespace<import('./registry/registry.ts').Registry>;
  /** A binding to this Worker itself: the demo poller reaches /demo/ through it. */
  SELF: Fetcher;
  /** The demo handler's database. */
  DB: D1Database;
  /** Where `deliver.type = "queue"` pollers send, and what this Worker's queue() consumes. */
  DELIVERY_QUEUE: Queue<import('./delivery/queue.ts').QueueMessageBody>;
  /** The pollers: a table from wrangler.toml, or the same as a JSON string. */
  POLLERS?: unknown;
  /** What a runtime poller's config may reach (docs/fleet.md, "What a runtime config may reach"): a table, or JSON. */
  FLEET_POLICY?: unknown;
  /** Secret: grants admin and read routes. */
  ADMIN_TOKEN?: string;
  /** Secret: grants read-only routes. */
  STATUS_TOKEN?: string;
  /** Secret: encrypts per-poller secrets at rest (AES-GCM under a key derived from it). */
  SECRETS_KEY?: string;
  /** Secret, while rotating SECRETS_KEY: the old key, still accepted for decryption. */
  SECRETS_KEY_PREVIOUS?: string;
  /** Label keys (comma-separated, at most 5) the fleet's /metrics series are split by. */
  METRICS_LABELS?: string;
  /** Overdue runtime pollers the watchdog visits first per cron tick, at most (default 200). */
  WATCHDOG_SLICE?: string;
  /** Ticks in which the watchdog visits every active runtime poller once (default 2). */
  WATCHDOG_ROUND?: string;
  /** Visits per invocation; a larger share goes out in groups to WatchdogShard (default 400). */
  WATCHDOG_GROUP?: string;
}

declare namespace Cloudflare {
  interface Env extends globalThis.Env {}
  interface GlobalProps {
    mainModule: typeof import('./index.ts');
    durableNamespaces: 'Poller' | 'DemoUpstream' | 'Registry';
  }
}
