import type { PollerConfig } from '../config/schema.ts';
import type { FailureKind } from './backoff.ts';
import type { DeliveryResult, UpstreamFailureKind } from './classify.ts';
import type { Lease } from './lease.ts';
import type { Window } from './window.ts';

/** One version of one upstream record: `(id, version)`. */
export interface Update {
  id: string;
  /** The record's updated_at exactly as the upstream reports it. */
  version: string;
  /** `version` as epoch milliseconds, for windows and ledger pruning. */
  versionMs: number;
  record: unknown;
}

/** A record the source could not read (no id, unparseable updated_at). */
export interface MalformedRecord {
  reason: string;
  raw: unknown;
}

export type PageResult =
  | {
      ok: true;
      updates: Update[];
      malformed: MalformedRecord[];
      /** Where the next page of the window is; null when this was the last. */
      next: string | null;
      /** The upstream's clock minus ours, from its Date header (R11). */
      skewMs?: number;
      /** The rate-limit quota is spent: no request before this time. */
      pauseUntil?: number;
    }
  | { ok: false; kind: UpstreamFailureKind; error: string; retryAfter?: number; skewMs?: number };

/** The upstream, one page at a time. `cursor` is null for a window's first page. */
export interface Source {
  fetchPage(window: Window, cursor: string | null): Promise<PageResult>;
}

export interface DeliveryContext {
  idempotencyKey: string;
  attempt: number;
}

/** Where updates go. Must not throw: failures are results. */
export interface Deliverer {
  deliver(update: Update, context: DeliveryContext): Promise<DeliveryResult>;
}

export type TriggerKind = 'cron' | 'manual' | 'retry' | 'continuation' | 'recovery';

export type RunOutcome = 'success' | 'failed' | 'skipped' | 'recovered' | 'fenced' | 'continued';

/** One line of run history. */
export interface RunRecord {
  epoch: number;
  trigger: TriggerKind;
  outcome: RunOutcome;
  startedAt: number;
  finishedAt: number;
  windows: number;
  pages: number;
  records: number;
  error: string | null;
  /** C when the run ended. */
  checkpoint: number | null;
}

/** The next thing the poller's alarm should do once no lease is held. */
export interface Wakeup {
  at: number;
  reason: 'retry' | 'continuation';
  /** For a retry: what failed, so cron ticks can be held off politely (R12). */
  failure?: FailureKind;
}

export interface PollerState {
  checkpoint: number | null;
  lease: Lease;
  wakeup: Wakeup | null;
  /** Consecutive failed runs without progress, for backoff. */
  failures: number;
  /** The upstream's clock minus ours, as last measured (R11). */
  skewMs: number | null;
  /** The upstream asked for no request before this. */
  rateLimitedUntil: number | null;
  /** The last window a run had to stop in without moving C, and how far it got. */
  stall: Stall | null;
}

/** A stopped window's depth, to tell a slow but advancing window from one that never ends. */
export interface Stall {
  from: number;
  pages: number;
}

/** What a finished run leaves for the next one. */
export interface RunAftermath {
  failures: number;
  wakeup: Wakeup | null;
  /** Null keeps the last measurement. */
  skewMs: number | null;
  rateLimitedUntil: number | null;
  stall: Stall | null;
}

export interface LedgerEntry {
  id: string;
  version: string;
  versionMs: number;
}

/**
 * Durable state of one poller. Synchronous, so that each method is atomic within the
 * Durable Object; every method taking an epoch is fenced (R6) and returns false, changing
 * nothing, when the stored lease is no longer that epoch's.
 */
export interface PollerStore {
  read(): PollerState;
  /** Compare-and-set on the epoch: grants `lease` only if the stored epoch is still `expectedEpoch`. */
  acquire(expectedEpoch: number, lease: Lease): boolean;
  /** Compare-and-set from "acquired" to "running": true for exactly one caller per epoch. */
  markRunning(epoch: number, expiresAt: number): boolean;
  /** Keys (`id` + `version`) of deliveries remembered at or above `from` (R9). */
  delivered(from: number): Set<string>;
  /** Moves C and keeps only the ledger the next window can need. */
  commitWindow(
    epoch: number,
    checkpoint: number,
    remember: LedgerEntry[],
    pruneBelow: number,
  ): boolean;
  /** Remembers deliveries of a window that did not complete, so the retry skips them. */
  remember(epoch: number, entries: LedgerEntry[]): boolean;
  /** Releases the lease and records the run, its counters and what happens next. */
  finishRun(epoch: number, run: RunRecord, next: RunAftermath): boolean;
  /** History only: a trigger that found the lease held, or a run fenced off. Not state. */
  recordRun(run: RunRecord): void;
  /** Records that the lease of a dead run was taken over (history and the recoveries counter). */
  recordRecovery(run: RunRecord): void;
}

/** Everything a run needs, injected so the engine never reads a clock or a binding itself. */
export interface RunContext {
  poller: string;
  config: PollerConfig;
  store: PollerStore;
  source: Source;
  deliverer: Deliverer;
  now: () => number;
  random: () => number;
  /** Waits (source.page_delay); the simulation advances its clock instead. */
  sleep?: (ms: number) => Promise<void>;
  /** Smallest step of the source's time format, in ms (1000 for unix seconds). */
  precision?: number;
  /** Hides secret values in text that will be stored or shown. */
  redact?: (text: string) => string;
  /** Called with one structured line per run. */
  log?: (line: Record<string, unknown>) => void;
}

/** A key for the ledger: one `(id, version)`. */
export function ledgerKey(id: string, version: string): string {
  return JSON.stringify([id, version]);
}
