import { heldDetail } from './child-deletes.ts';
import type { ChildProgress, ChildProgressStore } from './children.ts';
import { type Lease, NO_LEASE } from './lease.ts';
import { MemoryReconciliation } from './memory-reconciliation.ts';
import {
  type DeadLetter,
  type FailingUpdate,
  type Json,
  type LedgerEntry,
  ledgerKey,
  type PollerState,
  type PollerStore,
  type RememberedId,
  type RoundCommit,
  type RoundState,
  type RoundStore,
  type RunAftermath,
  type RunRecord,
  type Stall,
  type StreamStore,
  type WindowCommit,
} from './ports.ts';

/**
 * PollerStore in memory, with the same contract as the SQLite store: for engine tests and
 * the simulation. `crash()` forgets nothing: like storage, it survives a dead run.
 */
export class MemoryStore implements PollerStore {
  state: PollerState = {
    checkpoint: null,
    lease: { ...NO_LEASE },
    wakeup: null,
    failures: 0,
    skewMs: null,
    rateLimitedUntil: null,
    stall: null,
    paused: false,
    straggleMs: 0,
    scopeFrom: null,
    nextTickAt: null,
  };
  readonly ledger = new Map<string, LedgerEntry>();
  readonly runs: RunRecord[] = [];
  readonly failures = new Map<string, FailingUpdate>();
  readonly deadLetters = new Map<string, DeadLetter>();
  /** The per-id memory (changes_only, reconcile): what was last delivered of each id. */
  readonly ids = new Map<string, RememberedId>();
  /** source.deletions: that stream's checkpoint and ledger. */
  readonly deletionsStream: MemoryStream = new MemoryStream(this);
  /** source.resume: the round's token and cursor. */
  round: RoundState = { token: null, tokenAt: null, cursor: null, pages: 0, resync: null };
  /** The audit entries written (the SQLite store's audit_log). */
  readonly audit: { at: number; action: string; detail: Json }[] = [];
  readonly rounds: RoundStore = {
    read: () => ({ ...this.round }),
    keepCursor: (epoch, cursor, pages) => {
      if (!this.holds(epoch)) return false;
      this.round = { ...this.round, cursor, pages };
      return true;
    },
    expire: (epoch, at, reason) => {
      if (!this.holds(epoch)) return false;
      this.round = { token: null, tokenAt: null, cursor: null, pages: 0, resync: { at, reason } };
      this.audit.push({ at, action: 'resume_resync', detail: { reason } });
      return true;
    },
  };
  /** source.children: the child listing in progress. */
  childListing: ChildProgress | null = null;
  readonly childProgress: ChildProgressStore = {
    read: () => (this.childListing === null ? null : { ...this.childListing }),
    keep: (epoch, progress) => {
      if (!this.holds(epoch)) return false;
      this.childListing = progress === null ? null : { ...progress };
      this.rowsWritten += 1;
      return true;
    },
    known: (prefix) =>
      [...this.ids.values()]
        .filter((entry) => entry.id.startsWith(prefix) && !entry.deleted)
        .map((entry) => entry.id)
        .sort(),
    hold: (epoch, at, parent, ids) => {
      if (!this.holds(epoch)) return false;
      this.audit.push({ at, action: 'children_deletes_held', detail: heldDetail(parent, ids) });
      return true;
    },
  };
  /** reconcile: the listing's state, its ids and what it found. */
  readonly reconciliation: MemoryReconciliation = new MemoryReconciliation(this);
  recoveries = 0;
  /** Row writes, counted the way SQLite bills them, for cost checks. */
  rowsWritten = 0;

  read(): PollerState {
    return structuredClone(this.state);
  }

  acquire(expectedEpoch: number, lease: Lease, nextTickAt?: number | null): boolean {
    if (this.state.lease.epoch !== expectedEpoch) return false;
    this.state = { ...this.state, lease: { ...lease }, wakeup: null };
    if (nextTickAt !== undefined) this.state.nextTickAt = nextTickAt;
    this.rowsWritten += 1;
    return true;
  }

  releaseIdle(epoch: number, now: number): boolean {
    const { lease } = this.state;
    const idle = lease.phase === 'acquired' || (lease.expiresAt !== null && lease.expiresAt <= now);
    if (!this.holds(epoch) || !idle) return false;
    this.state.lease = { ...this.state.lease, held: false };
    this.rowsWritten += 1;
    return true;
  }

  markRunning(epoch: number, expiresAt: number): boolean {
    if (!this.holds(epoch) || this.state.lease.phase !== 'acquired') return false;
    this.state.lease = { ...this.state.lease, phase: 'running', expiresAt };
    this.rowsWritten += 1;
    return true;
  }

  delivered(from: number): Set<string> {
    const keys = new Set<string>();
    for (const entry of this.ledger.values()) {
      if (entry.versionMs >= from) keys.add(ledgerKey(entry.id, entry.version));
    }
    return keys;
  }

  commitWindow(
    epoch: number,
    checkpoint: number,
    remember: LedgerEntry[],
    pruneBelow: number,
    round?: RoundCommit,
  ): boolean {
    if (!this.holds(epoch)) return false;
    if (round)
      this.round = { ...this.round, token: round.token, tokenAt: round.at, cursor: null, pages: 0 };
    this.state.scopeFrom ??= this.state.checkpoint ?? checkpoint;
    this.state.checkpoint = checkpoint;
    this.rowsWritten += 1;
    this.insert(remember);
    for (const [key, entry] of this.ledger) {
      if (entry.versionMs < pruneBelow) {
        this.ledger.delete(key);
        this.rowsWritten += 1;
      }
    }
    // A failing version below C stays stored and is retried (R19): C passing it settles nothing.
    return true;
  }

  remember(epoch: number, entries: LedgerEntry[]): boolean {
    if (!this.holds(epoch)) return false;
    this.insert(entries);
    return true;
  }

  finishRun(epoch: number, run: RunRecord, next: RunAftermath, commit?: WindowCommit): boolean {
    if (!this.holds(epoch)) return false;
    if (commit) {
      this.commitWindow(epoch, commit.checkpoint, commit.remember, commit.pruneBelow, commit.round);
      this.rowsWritten -= 1; // one write of the state row for both, as in SQLite
    }
    this.state.lease = { ...this.state.lease, held: false };
    this.state.failures = next.failures;
    this.state.wakeup = next.wakeup;
    this.state.skewMs = next.skewMs ?? this.state.skewMs;
    this.state.rateLimitedUntil = next.rateLimitedUntil;
    this.state.stall = next.stall;
    this.state.straggleMs = Math.max(this.state.straggleMs, next.straggleMs);
    this.rowsWritten += 1;
    this.recordRun(run);
    return true;
  }

  recordRun(run: RunRecord): void {
    this.runs.push(run);
    this.rowsWritten += 1;
  }

  recordRecovery(run: RunRecord): void {
    this.recoveries += 1;
    this.recordRun(run);
  }

  failing(): Map<string, FailingUpdate> {
    return new Map([...this.failures].map(([key, failure]) => [key, { ...failure }]));
  }

  recordFailure(epoch: number, failure: FailingUpdate): boolean {
    if (!this.holds(epoch)) return false;
    this.failures.set(failure.key, { ...failure });
    this.rowsWritten += 1;
    return true;
  }

  clearFailure(epoch: number, key: string): boolean {
    if (!this.holds(epoch)) return false;
    if (this.failures.delete(key)) this.rowsWritten += 1;
    return true;
  }

  deadLetter(epoch: number, letter: DeadLetter): boolean {
    if (!this.holds(epoch)) return false;
    if (!this.deadLetters.has(letter.key)) {
      this.deadLetters.set(letter.key, structuredClone(letter));
      this.rowsWritten += 1;
    }
    if (this.failures.delete(letter.key)) this.rowsWritten += 1;
    if (
      letter.kind === 'delivery' &&
      letter.id !== null &&
      letter.version !== null &&
      letter.versionMs !== null
    ) {
      this.insert([{ id: letter.id, version: letter.version, versionMs: letter.versionMs }]);
    }
    return true;
  }

  setNextTick(at: number | null): void {
    this.state.nextTickAt = at;
    this.rowsWritten += 1;
  }

  rememberPage(epoch: number, entries: LedgerEntry[]): boolean {
    return this.remember(epoch, entries); // one map: a row per page is the SQLite store's saving
  }

  persistLease(epoch: number): boolean {
    return this.holds(epoch); // every lease of this store is as durable as the rest of it
  }

  holds(epoch: number): boolean {
    return this.state.lease.held && this.state.lease.epoch === epoch;
  }

  idsOf(ids: readonly string[]): Map<string, RememberedId> {
    const known = new Map<string, RememberedId>();
    for (const id of ids) {
      const entry = this.ids.get(id);
      if (entry) known.set(id, { ...entry });
    }
    return known;
  }

  rememberIds(epoch: number, entries: readonly RememberedId[]): boolean {
    if (!this.holds(epoch)) return false;
    for (const entry of entries) {
      const before = this.ids.get(entry.id);
      if (before && before.versionMs > entry.versionMs) continue;
      this.ids.set(entry.id, { ...entry });
      this.rowsWritten += 1;
    }
    return true;
  }

  private insert(entries: LedgerEntry[]): void {
    for (const entry of entries) {
      const key = ledgerKey(entry.id, entry.version);
      if (!this.ledger.has(key)) {
        this.ledger.set(key, entry);
        this.rowsWritten += 1;
      }
    }
  }
}

/** A stream's checkpoint and ledger in memory (StreamStore), fenced by its store's lease. */
export class MemoryStream implements StreamStore {
  checkpointAt: number | null = null;
  stalled: Stall | null = null;
  readonly ledger = new Map<string, LedgerEntry>();

  constructor(private readonly store: MemoryStore) {}

  checkpoint(): number | null {
    return this.checkpointAt;
  }

  stall(): Stall | null {
    return this.stalled === null ? null : { ...this.stalled };
  }

  keepStall(epoch: number, stall: Stall | null): boolean {
    if (!this.store.holds(epoch)) return false;
    if (stall?.from === this.stalled?.from && stall?.pages === this.stalled?.pages) return true;
    this.stalled = stall === null ? null : { ...stall };
    this.store.rowsWritten += 1;
    return true;
  }

  delivered(from: number): Set<string> {
    const keys = new Set<string>();
    for (const [key, entry] of this.ledger) if (entry.versionMs >= from) keys.add(key);
    return keys;
  }

  commitWindow(
    epoch: number,
    checkpoint: number,
    remember: LedgerEntry[],
    pruneBelow: number,
  ): boolean {
    if (!this.store.holds(epoch)) return false;
    this.checkpointAt = checkpoint;
    this.stalled = null;
    this.store.rowsWritten += 1;
    this.add(remember);
    for (const [key, entry] of this.ledger)
      if (entry.versionMs < pruneBelow) this.ledger.delete(key);
    return true;
  }

  remember(epoch: number, entries: LedgerEntry[]): boolean {
    if (!this.store.holds(epoch)) return false;
    this.add(entries);
    return true;
  }

  private add(entries: LedgerEntry[]): void {
    for (const entry of entries) {
      const key = ledgerKey(entry.id, entry.version);
      if (this.ledger.has(key)) continue;
      this.ledger.set(key, entry);
      this.store.rowsWritten += 1;
    }
  }
}
