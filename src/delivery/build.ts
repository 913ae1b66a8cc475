import type { Deliverer } from '../engine/ports.ts';
import type { HttpFetch } from '../sources/http-source.ts';

export type DelivererOrError = { ok: true; deliverer: Deliverer } | { ok: false; error: string };

/** Which life of the poller sends (R14). */
export interface Sender {
  /** The runtime incarnation (0 for a static poller): queue messages carry it. */
  incarnation: number;
  /** Called right before each send (a request, a sendBatch, a handler call): throws once the life ended. */
  check: () => void;
}

/** What a kind's deliverer is built from, besides its own `deliver` table. */
export interface DeliveryDeps {
  poller: string;
  env: Env;
  /** `env` as values by name, for a binding the config names (`deliver.binding`). */
  bindings: Record<string, unknown>;
  /** Outbound requests (a webhook's POST). */
  fetcher: HttpFetch;
  /** Secret values, redacted from every error. */
  secrets: readonly string[];
  now: () => number;
  /** Every send of every kind calls `sender.check()` first. */
  sender: Sender;
}

/**
 * Builds a kind's deliverer from its table, gated by `deps.sender` on every send, or says
 * what is missing (naming the key).
 */
export type BuildDeliverer<C> = (config: C, deps: DeliveryDeps) => DelivererOrError;
