import type { NudgeReply } from '../engine/nudge.ts';
import type { TriggerResult } from '../engine/poller.ts';
import type { RunNowKind, RunRecord } from '../engine/ports.ts';
import type { PreviewResult } from '../preview/preview.ts';
import type { PutSecretResult, SecretListing } from '../secrets/index.ts';
import type { CheckpointRequest, CheckpointResult } from './admin.ts';
import type { DeadLetterView, ReplayResult } from './dead-letters.ts';
import type { PollerStatus } from './status.ts';
import type { StoredRun } from './store/history.ts';

/** The poller's config does not load: nothing was done, and these say why. */
export type Misconfigured = { outcome: 'misconfigured'; errors: string[] };

export type TriggerReply = TriggerResult | Misconfigured;

/** POST /pollers/:name/reconcile (`start`) and /reconcile/confirm (`confirm`). */
export type ReconcileReply =
  | { outcome: 'requested'; listing_in_progress: boolean; trigger: TriggerResult }
  | { outcome: 'confirmed'; deletes: number; trigger: TriggerResult }
  | { outcome: 'refused'; status: 404 | 409; error: string }
  | Misconfigured;

/** What a manual run did: ran (its history line), or why it did not. */
/** A manual run's reply: the run as history keeps it, with its id (null: not kept, erased). */
export type RunNowReply =
  | TriggerResult
  | { outcome: 'ran'; run: RunRecord & { id: number | null } }
  | Misconfigured;

export type NudgeRpcReply =
  | NudgeReply
  | { outcome: 'unauthorized' }
  | { outcome: 'ignored'; reason: 'misconfigured' };

/** What a config push did: applied (its version), refused for an erased incarnation, or invalid. */
export type ConfigureReply =
  | { ok: true; version: number }
  | { ok: false; refused?: 'erased'; errors: string[] };

/** What the watchdog's visit found; `stale` when the object does not run the issued config. */
export type VisitReply =
  | {
      ok: true;
      repaired: boolean;
      nextTickAt: number | null;
      version: number | null;
      incarnation: number | null;
    }
  | {
      ok: false;
      stale: boolean;
      errors: string[];
      version: number | null;
      incarnation: number | null;
    };

/** The config version and incarnation the registry issued, as a watchdog visit checks them. */
export interface IssuedConfig {
  version: number;
  incarnation: number;
}

/** An update stored as failing (R19): every run retries it until it is delivered or a dead letter. */
export interface RetryingUpdate {
  /** Its idempotency key: a delete's ends in `:deleted` (engine/idempotency.ts). */
  key: string;
  id: string;
  version_ms: number;
  /** 0: held behind an older version of its id, not tried yet. */
  attempts: number;
}

/** One page of dead letters, oldest first; `next_cursor` continues it. */
export interface DeadLetterPage {
  items: DeadLetterView[];
  next_cursor: string | null;
}

/**
 * A write meant for a life of the poller that is not the object's own (R14): nothing was
 * written. 404: the object was erased (no poller, as for an unknown name); 409: it runs
 * another incarnation (the name was deleted and created again since the caller looked).
 */
export type OtherLife = { outcome: 'refused'; status: 404 | 409; error: string };

export type DiscardReply = { outcome: 'discarded' | 'not_found'; key: string } | OtherLife;

/** A message the queue consumer gave up on, as it hands it over to be kept. */
export interface QueuedDeadLetter {
  key: string;
  id: string;
  version: string;
  /** The record, as JSON text. */
  record: string;
  attempts: number;
  /** When the message was first sent. */
  at: number;
  /** source.children: the child's parent (a child's delete is its null record under one). */
  parent?: string;
}

export type PutSecretReply =
  | PutSecretResult
  | { outcome: 'refused'; status: 503; error: string }
  | OtherLife;

/**
 * A secret's name, when it was set, the fingerprint of the key it is sealed under, and the
 * origins it may be sent to (null: set before secrets were bound, not wired since).
 */
export type SealedSecretListing = SecretListing & { key_id: string; origins: string[] | null };

/** POST /pollers/:name/preview: where the window starts, and how much to read at most. */
export interface PreviewAsk {
  /** A time (epoch ms), or the poller's checkpoint (as its next run would start). */
  from: number | 'checkpoint';
  pages: number;
  records: number;
}

/** A preview's answer; `refused` for an erased object (no poller here). */
export type PreviewReply =
  | { outcome: 'previewed'; preview: PreviewResult }
  | { outcome: 'busy'; error: string }
  | { outcome: 'refused'; status: 404; error: string }
  | Misconfigured;

/** What the object has written to storage since it started, for cost checks. */
export interface StorageStats {
  rowsWritten: number;
  alarmWrites: number;
  ledgerRows: number;
}

/**
 * What the Worker asks of a poller's object (routes, watchdog, fleet lifecycle, queue
 * consumer), as RPC. The object is reached by `idFromName(poller)` and knows its name from
 * its id: no method takes it. Each admin write takes `meant`, the life of the poller its
 * caller found in the catalog (`pollerLife`: a runtime poller's incarnation, or
 * STATIC_INCARNATION), and is refused (OtherLife) by an object that was erased or runs
 * another one since: a DELETE between the caller's look and its write changes nothing (R14).
 */
export interface PollerRpc {
  /** A cron or manual trigger: takes the lease (or is skipped) and returns at once. */
  trigger(kind: 'cron' | 'manual'): Promise<TriggerReply>;
  /** What `GET /status/:poller` shows. */
  status(): Promise<PollerStatus>;
  /** "Something changed upstream": `token` is the nudge token presented, null after ADMIN_TOKEN. */
  nudge(token: string | null): Promise<NudgeRpcReply>;
  /** The run history, newest first, each run with its id. */
  runs(limit: number): Promise<StoredRun[]>;
  /** One run by its id (an idle one folded with others too), or null once it left the history. */
  run(id: number): Promise<StoredRun | null>;
  /** Runs now (`manual`, audited; or npm start's `startup`) and answers with the run's outcome, or says why it was skipped. */
  runNow(kind?: RunNowKind): Promise<RunNowReply>;
  /**
   * Reads one window as a run would, under the poller's lease, and answers with its requests
   * and records: delivers nothing, writes nothing but the lease and an audit line.
   */
  preview(ask: PreviewAsk): Promise<PreviewReply>;
  /** Starts a reconciliation listing now, or confirms the deletes one holds. */
  reconcile(action: 'start' | 'confirm'): Promise<ReconcileReply>;
  /** Pauses (every trigger skipped) or resumes the poller. */
  setPaused(
    meant: number,
    paused: boolean,
    reason: string | null,
  ): Promise<{ paused: boolean } | OtherLife>;
  /** A runtime poller's config from the registry: `version` of `incarnation` (R14). */
  configure(config: string, version: number, incarnation: number): Promise<ConfigureReply>;
  /** Stops the poller for good and erases its storage, keeping a tombstone of `incarnation`. */
  erase(incarnation?: number): Promise<void>;
  /** The watchdog's visit: the tick booked, the alarm set again if the platform lost it. */
  ensureScheduled(issued?: IssuedConfig | null): Promise<VisitReply>;
  /** Moves the checkpoint by hand: a backfill, or with force a skip forward; or a resync (source.resume). */
  moveCheckpoint(meant: number, request: CheckpointRequest): Promise<CheckpointResult | OtherLife>;
  /** What the object has written to storage since it started, for cost checks. */
  storageStats(): Promise<StorageStats>;
  /** The updates stored as failing and retried by every run (R19), oldest version first. */
  retryingUpdates(): Promise<RetryingUpdate[]>;
  /** Dead letters, oldest first, a page at a time. */
  deadLetters(limit: number, cursor?: string): Promise<DeadLetterPage>;
  /** Delivers a dead letter again now, holding the lease meanwhile; success removes it. */
  replayDeadLetter(key: string): Promise<ReplayResult | Misconfigured>;
  /** Keeps a message the queue consumer gave up on as one of this poller's dead letters. */
  queueDeadLetter(
    meant: number,
    message: QueuedDeadLetter,
  ): Promise<{ outcome: 'kept' } | OtherLife>;
  /** Discards a dead letter; the reason stays in the audit log. */
  discardDeadLetter(meant: number, key: string, reason: string): Promise<DiscardReply>;
  /**
   * Sets one of the poller's own secrets (write-only: the value never comes back), bound to
   * `origins`, or else to those its config sends it to now (R18).
   */
  putSecret(
    meant: number,
    secret: string,
    value: string,
    origins?: string[] | null,
  ): Promise<PutSecretReply>;
  /** The poller's own secrets: names, when set, and the key each is sealed under. */
  listSecrets(): Promise<SealedSecretListing[]>;
  /** Removes one of the poller's own secrets. */
  deleteSecret(meant: number, secret: string): Promise<{ deleted: boolean } | OtherLife>;
}
