import type { PollerConfig } from '../config/schema.ts';
import type { FailureKind } from './backoff.ts';
import type { ChildProgressStore, ChildrenPort } from './children.ts';
import type { DeliveryResult } from './classify.ts';
import type { FreshnessStore, LatenessObserver } from './freshness-ports.ts';
import type { IdleLog } from './idle-log.ts';
import type { Lease } from './lease.ts';
import type { Reconciler, ReconcileStore } from './reconcile-ports.ts';
import type { RoundCommit, RoundStore } from './round-ports.ts';
import type { RunRecord } from './run-record.ts';
import type { Source } from './source-port.ts';
import type { Precision } from './window.ts';

export type { RoundCommit, RoundState, RoundStore } from './round-ports.ts';
export type { MalformedRecord, PageResult, Source } from './source-port.ts';

/**
 * A JSON value: what records, dead letters and audit details are made of. Kept shallow on
 * purpose: a recursive type is too deep for the Durable Object RPC types to map.
 */
export type Json = string | number | boolean | null | object;

/** One version of one upstream record: `(id, version)`. */
export interface Update {
  id: string;
  /** The record's updated_at exactly as the upstream reports it. */
  version: string;
  /** `version` as epoch milliseconds, for windows and ledger pruning. */
  versionMs: number;
  record: unknown;
  /** A reconciliation's delete: when the listing that found it began (part of its key). */
  foundAt?: number;
  /** source.children: the id of the parent record this one was listed under. */
  parent?: string;
}

/**
 * What was last delivered of an id (the per-id memory of deliver.changes_only and
 * reconcile): its version, its content's hash (changes_only), whether it was a delete, and
 * when it was delivered (our clock).
 */
export interface RememberedId {
  id: string;
  versionMs: number;
  /** Null when the poller does not hash content (no deliver.changes_only). */
  hash: string | null;
  deleted: boolean;
  seenAt: number;
}

/** What a delivery asks the receiver to do with the record. */
export type DeliveryOp = 'upsert' | 'delete';

/** One update on its way out, with its idempotency key (R13) and attempt number (R8). */
export interface DeliveryItem {
  update: Update;
  /** A delete (a tombstone the stream showed, R15) or an upsert: the receiver is told which. */
  op: DeliveryOp;
  idempotencyKey: string;
  /** 1 for the first attempt at this update. */
  attempt: number;
}

/**
 * Where updates go: a batch of distinct ids, one result for the whole batch (a webhook
 * request, a queue sendBatch, one handler call). Must not throw: failures are results.
 */
export interface Deliverer {
  /**
   * The most items one `deliver` call takes, as the delivery's kind says (1 for a handler).
   * Absent (a test double): `deliver.batch` where the config has one, else 1.
   */
  readonly batch?: number;
  deliver(items: DeliveryItem[]): Promise<DeliveryResult>;
  /** For the length of a run, as Source.hold. */
  hold?(): () => void;
}

/** An update that failed before and has not been dead-lettered yet. */
export interface FailingUpdate {
  key: string;
  id: string;
  version: string;
  versionMs: number;
  /** Kept so that a failing version the upstream stops showing can still be a dead letter. */
  record: unknown;
  attempts: number;
  firstFailure: number;
  lastFailure: number;
  lastError: string;
  /** source.children: the parent of a child (its envelope names it on every retry). */
  parent?: string;
}

/** An update that will not be delivered by the poll loop: kept, visible and replayable (R8). */
export interface DeadLetter {
  /** The idempotency key, or `<poller>:unreadable:<hash>` for a record the source could not read. */
  key: string;
  kind: 'delivery' | 'unreadable';
  id: string | null;
  version: string | null;
  versionMs: number | null;
  /** The record, or the raw payload the source could not read. */
  record: unknown;
  error: string;
  attempts: number;
  firstFailure: number;
  lastFailure: number;
  /** source.children: a child's parent. */
  parent?: string;
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
  /** An admin paused the poller: every trigger is skipped until it is resumed. */
  paused: boolean;
  /**
   * How far below a window's `from` the upstream has been seen to answer (it truncates
   * `from`, or filters on another timestamp): the ledger remembers that much more (R9).
   */
  straggleMs: number;
  /** Where the poller's scope starts: its first checkpoint, or an earlier one backfilled from. */
  scopeFrom: number | null;
  /** The poller's next own tick (its `cron` or `every`): the alarm wakes it then. */
  nextTickAt: number | null;
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
  /** The deepest straggle this run saw; the stored one only ever grows. */
  straggleMs: number;
}

export interface LedgerEntry {
  id: string;
  version: string;
  versionMs: number;
}

/** A window's commit: C, the deliveries the next window can ask for again, the prune. */
export interface WindowCommit {
  checkpoint: number;
  remember: LedgerEntry[];
  pruneBelow: number;
  /** source.resume: the token the round ended with, stored with C in one write (R20). */
  round?: RoundCommit;
}

/**
 * Durable state of one poller. Synchronous, so that each method is atomic within the
 * Durable Object; every method taking an epoch is fenced (R6) and returns false, changing
 * nothing, when the stored lease is no longer that epoch's.
 */
export interface PollerStore {
  read(): PollerState;
  /** True while the stored lease is held by `epoch` (R6): the check after every await of a run. */
  holds(epoch: number): boolean;
  /**
   * Compare-and-set on the epoch: grants `lease` only if the stored epoch is still
   * `expectedEpoch`; with `nextTickAt`, books the poller's next tick in the same write. A
   * lease granted running (its run starts in this same turn) may be kept in memory until the
   * run's first write or persistLease: a run that dies before either leaves nothing to
   * recover, and the poller's alarm (set to its next tick) starts the next run.
   */
  acquire(expectedEpoch: number, lease: Lease, nextTickAt?: number | null): boolean;
  /**
   * Writes a lease kept in memory (see acquire), before the run's first effect outside the
   * object (a delivery): a run that dies after it is recovered at the lease's expiry (R5).
   * False, writing nothing, when `epoch` no longer holds the lease (R6).
   */
  persistLease(epoch: number): boolean;
  /**
   * Gives back a lease nobody works under: granted but not started, or expired (its run is
   * dead). For a paused poller, which starts no run of any kind, not even a recovery.
   */
  releaseIdle(epoch: number, now: number): boolean;
  /** Compare-and-set from "acquired" to "running": true for exactly one caller per epoch. */
  markRunning(epoch: number, expiresAt: number): boolean;
  /** Keys (`id` + `version`) of deliveries remembered at or above `from` (R9). */
  delivered(from: number): Set<string>;
  /**
   * Moves C and keeps only the ledger the next window can need; with `round`, stores the
   * round's token (its cursor done) in the same write (R20).
   */
  commitWindow(
    epoch: number,
    checkpoint: number,
    remember: LedgerEntry[],
    pruneBelow: number,
    round?: RoundCommit,
  ): boolean;
  /** Remembers deliveries of a window that did not complete, so the retry skips them. */
  remember(epoch: number, entries: LedgerEntry[]): boolean;
  /**
   * Remembers a page just delivered by a window that goes on (in one row), so that the run
   * after a crash skips it: a crash redelivers at most the page in flight (R9's ledger,
   * pruned with it as C moves). Fenced (R6).
   */
  rememberPage(epoch: number, entries: LedgerEntry[]): boolean;
  /**
   * Releases the lease and records the run, its counters and what happens next; with
   * `commit`, also commits the run's last window (as commitWindow would), in the same write.
   */
  finishRun(epoch: number, run: RunRecord, next: RunAftermath, commit?: WindowCommit): boolean;
  /** History only: a trigger that found the lease held, or a run fenced off. Not state. */
  recordRun(run: RunRecord): void;
  /** Records that the lease of a dead run was taken over (history and the recoveries counter). */
  recordRecovery(run: RunRecord): void;
  /**
   * Every update that failed before and is neither delivered nor dead-lettered, by
   * idempotency key: wherever it is stamped (below the window too), it gets its attempts.
   */
  failing(): Map<string, FailingUpdate>;
  /** Counts one more failed attempt at an update. */
  recordFailure(epoch: number, failure: FailingUpdate): boolean;
  /** Forgets the failures of an update that has now been delivered. */
  clearFailure(epoch: number, key: string): boolean;
  /** Moves an update to the dead letters; it then counts as handled (R8). */
  deadLetter(epoch: number, letter: DeadLetter): boolean;
  /** The per-id memory: what was last delivered of these ids (those the store knows). */
  idsOf?(ids: readonly string[]): Map<string, RememberedId>;
  /** The per-id memory: keeps what was delivered; an older version never replaces a newer (fenced, R6). */
  rememberIds?(epoch: number, entries: readonly RememberedId[]): boolean;
  /** source.deletions: that stream's checkpoint and ledger. */
  deletionsStream?: StreamStore;
  /** source.resume: the round's token and page cursor. */
  rounds?: RoundStore;
  /** source.children: the child listing in progress. */
  childProgress?: ChildProgressStore;
  /** reconcile: the listing's state, its ids and what it found. */
  reconciliation?: ReconcileStore;
  /** Books the poller's next own tick (null: none). Scheduling, not a run's commit: not fenced. */
  setNextTick(at: number | null): void;
}

/**
 * A stream beside the main one (source.deletions): its own checkpoint and ledger (R1, R9),
 * and its own stall (a window of its own too big for one run), fenced by the poller's lease
 * like the main stream's (R6).
 */
export interface StreamStore {
  checkpoint(): number | null;
  /** The last window of this stream a run had to stop in without moving its C (PollerState.stall). */
  stall(): Stall | null;
  /** Keeps (or, with null, forgets) this stream's stall. */
  keepStall(epoch: number, stall: Stall | null): boolean;
  /** Keys (`id` + `version`) of this stream's deliveries remembered at or above `from`. */
  delivered(from: number): Set<string>;
  /** Moves this stream's C (its stall, if any, is over) and keeps the ledger it needs. */
  commitWindow(
    epoch: number,
    checkpoint: number,
    remember: LedgerEntry[],
    pruneBelow: number,
  ): boolean;
  remember(epoch: number, entries: LedgerEntry[]): boolean;
}

/** When a poller ticks by itself: the next tick strictly after a time, or null. */
export interface Schedule {
  next(after: number): number | null;
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
  /** The poller's own ticks (its `cron` or `every`); without one it ticks only when triggered. */
  schedule?: Schedule;
  /** What the source's time format can send (its unit, its zone): window bounds are floored to it. */
  precision?: Precision;
  /** Hides secret values in text that will be stored or shown. */
  redact?: (text: string) => string;
  /** Whether a record is a tombstone (`source.deleted`); without it, every record is an upsert. */
  isDeleted?: ((record: unknown) => boolean) | null;
  /**
   * Set for what does not come from the main stream: `deletions` for the deletes of
   * source.deletions and of a reconciliation (each a delete whatever its record says),
   * `listing` for a reconciliation's upserts. Their idempotency keys say so
   * (engine/idempotency.ts), so their failures are their own pass's to retry.
   */
  stream?: 'deletions' | 'listing';
  /** source.deletions: the deletions stream's own context, polled after the main stream. */
  deletions?: RunContext | null;
  /** source.children: the children's endpoint (engine/children.ts). */
  children?: ChildrenPort | null;
  /** reconcile: the full listing (engine/reconcile.ts), worked on after the streams. */
  reconcile?: Reconciler | null;
  /** Called with one structured line per run (idle runs sampled: idleLog). */
  log?: (line: Record<string, unknown>) => void;
  /** Samples the lines of runs that found nothing (engine/idle-log.ts); without it, every run is logged. */
  idleLog?: IdleLog;
  /** Nudges and observed lateness (engine/nudge.ts, engine/lateness.ts); without it, neither. */
  freshness?: FreshnessStore;
  /** The running run's lateness observer, set by the engine for each run (engine/lateness.ts). */
  lateness?: LatenessObserver;
}

/** A key for the ledger: one `(id, version)`. */
export function ledgerKey(id: string, version: string): string {
  // A separator no id or timestamp contains: cheaper than JSON on the per-record path.
  return `${id}\u0000${version}`;
}

export type {
  Coverage,
  FreshnessStore,
  LatenessMeasurement,
  LatenessObserver,
  LatenessSummary,
  NearMiss,
  NudgeState,
} from './freshness-ports.ts';
export type {
  FoundDeletes,
  ListedId,
  ListingSummary,
  PendingChange,
  Reconciler,
  ReconcileState,
  ReconcileStep,
  ReconcileStore,
} from './reconcile-ports.ts';
export type { RunNowKind, RunOutcome, RunRecord, TriggerKind } from './run-record.ts';
