// Owns the poller_state table's lease, checkpoint and what comes next: the engine's port.
import type { Lease } from '../../engine/lease.ts';
import type {
  DeadLetter,
  FailingUpdate,
  LedgerEntry,
  PollerState,
  PollerStore,
  RememberedId,
  RoundCommit,
  RunAftermath,
  RunRecord,
  WindowCommit,
} from '../../engine/ports.ts';
import type { DeadLetters } from './dead-letters.ts';
import type { DeliveryFailures } from './delivery-failures.ts';
import { FINISH_SET, type History } from './history.ts';
import type { StoreHost } from './host.ts';
import type { IdMemory } from './id-memory.ts';
import { acquireInMemory, finishInMemory, leaseInMemory, writeIfDue } from './idle-runs.ts';
import {
  LEDGER_CLEARED,
  LEDGER_COMMIT_SET,
  type Ledger,
  type LedgerCommit,
  ledgerBindings,
} from './ledger.ts';
import type { ResumeRound } from './resume-round.ts';
import { pollerStateOf } from './state-row.ts';

/** The fence of R6, in SQL: a write applies only while the stored lease is the run's own. */
const FENCE = 'WHERE id = 1 AND epoch = ? AND lease_held = 1';

/** What a commit sets in the state row; bound by commitBindings. */
const COMMIT_SET = `checkpoint = ?, scope_from = COALESCE(scope_from, checkpoint, ?), ${LEDGER_COMMIT_SET}`;

function commitBindings(checkpoint: number, ledger: LedgerCommit): unknown[] {
  return [checkpoint, checkpoint, ...ledgerBindings(ledger)];
}

/** The tables the port's commits reach beyond the state row, each through its owner. */
export interface PortTables {
  ledger: Ledger;
  /** source.resume: a round's token is stored with the commit that ends it (R20). */
  rounds: ResumeRound;
  ids: IdMemory;
  failures: DeliveryFailures;
  deadLetters: DeadLetters;
  history: History;
}

/**
 * The engine's port (PollerStore) over the poller's SQLite. Owns the `poller_state` row's
 * lease, checkpoint, scope and what comes next (wakeup, backoff, skew, rate limit, stall,
 * pause, next tick); its commits reach the other tables through their owners, in one
 * transaction, each fenced by the lease's epoch (R6).
 */
export class PollerStateStore implements PollerStore {
  constructor(
    protected readonly host: StoreHost,
    private readonly tables: PortTables,
  ) {}

  read(): PollerState {
    return pollerStateOf(this.host.row());
  }

  holds(epoch: number): boolean {
    if (!this.host.live) return false;
    const row = this.host.row();
    return row.lease_held === 1 && row.epoch === epoch;
  }

  acquire(expectedEpoch: number, lease: Lease, nextTickAt?: number | null): boolean {
    // A run started in this same turn: its lease waits in memory (see idle-runs.ts).
    if (lease.phase === 'running' && lease.startedAt !== null) {
      return acquireInMemory(
        this.host,
        expectedEpoch,
        { ...lease, startedAt: lease.startedAt },
        nextTickAt,
      );
    }
    return (
      this.host.updateState(
        `epoch = ?, lease_trigger = ?, lease_held = 1, lease_phase = ?,
           lease_started_at = ?, lease_expires_at = ?, wakeup_at = NULL, wakeup_reason = NULL, wakeup_failure = NULL,
           next_tick_at = CASE WHEN ? THEN ? ELSE next_tick_at END`,
        'WHERE id = 1 AND epoch = ?',
        lease.epoch,
        lease.trigger,
        lease.phase,
        lease.startedAt,
        lease.expiresAt,
        nextTickAt === undefined ? 0 : 1,
        nextTickAt ?? null,
        expectedEpoch,
      ) > 0
    );
  }

  setNextTick(at: number | null): void {
    this.host.updateState('next_tick_at = ?', 'WHERE id = 1', at);
  }

  releaseIdle(epoch: number, now: number): boolean {
    const where = `${FENCE} AND (lease_phase = 'acquired' OR lease_expires_at <= ?)`;
    return this.host.updateState('lease_held = 0', where, epoch, now) > 0;
  }

  markRunning(epoch: number, expiresAt: number): boolean {
    // Compare-and-set on the phase too: of two alarm invocations, only one starts the run.
    const set = `lease_phase = 'running', lease_expires_at = ?`;
    return (
      this.host.updateState(set, `${FENCE} AND lease_phase = 'acquired'`, expiresAt, epoch) > 0
    );
  }

  /**
   * Takes the lease for work beside the runs (R4): a dead-letter replay, or a preview. The
   * next epoch, straight to "running" so that no alarm starts a run under it, and without
   * touching a booked retry or continuation, which still comes after it. Null when a lease
   * is held.
   */
  holdAside(
    trigger: 'replay' | 'preview',
    expectedEpoch: number,
    startedAt: number,
    expiresAt: number,
  ): number | null {
    const epoch = expectedEpoch + 1;
    const taken = this.host.updateState(
      `epoch = ?, lease_trigger = ?, lease_held = 1, lease_phase = 'running',
         lease_started_at = ?, lease_expires_at = ?`,
      'WHERE id = 1 AND epoch = ? AND lease_held = 0',
      epoch,
      trigger,
      startedAt,
      expiresAt,
      expectedEpoch,
    );
    return taken > 0 ? epoch : null;
  }

  /** Gives back a lease held aside; fenced, as a recovery may have taken an expired one over. */
  releaseAside(epoch: number): boolean {
    return this.host.updateState('lease_held = 0', FENCE, epoch) > 0;
  }

  /** Pauses or resumes the poller (an admin action, not a run's: not fenced). */
  setPaused(paused: boolean): void {
    this.host.updateState('paused = ?', 'WHERE id = 1', paused ? 1 : 0);
  }

  /**
   * Moves C by hand, unless a lease is held (the run would overwrite it). Backward is a
   * backfill: the ledger is cleared so that the window is delivered again in full. Pending
   * delivery failures stay: a failing version the upstream no longer lists exists only in
   * its stored record, and the next runs retry it from there until it is delivered or
   * dead-lettered (R8).
   */
  moveCheckpoint(at: number): boolean {
    return this.host.transaction(() => {
      const moved = this.host.updateState(
        `checkpoint = ?, scope_from = MIN(COALESCE(scope_from, ?), ?),
           stall_from = NULL, stall_pages = NULL, ${LEDGER_CLEARED}`,
        'WHERE id = 1 AND lease_held = 0',
        at,
        at,
        at,
      );
      if (moved === 0) return false;
      this.tables.ledger.clear();
      return true;
    });
  }

  /**
   * Just after an erase, in the fresh tables: the epoch the erased incarnation had reached,
   * so that the next incarnation's first run takes the one after and no epoch is ever seen
   * twice by this object (R14).
   */
  continueEpochs(epoch: number): void {
    this.host.write('UPDATE poller_state SET epoch = ? WHERE id = 1', epoch);
  }

  delivered(from: number): Set<string> {
    return this.tables.ledger.delivered(from);
  }

  commitWindow(
    epoch: number,
    checkpoint: number,
    remember: LedgerEntry[],
    pruneBelow: number,
    round?: RoundCommit,
  ): boolean {
    return this.host.transaction(() => {
      if (!this.holds(epoch)) return false;
      if (round) this.tables.rounds.commit(round);
      const ledger = this.commitLedger(remember, pruneBelow);
      // The ledger's size and boundary ride on the checkpoint's own row write.
      this.host.updateState(COMMIT_SET, FENCE, ...commitBindings(checkpoint, ledger), epoch);
      return true;
    });
  }

  rememberPage(epoch: number, entries: LedgerEntry[]): boolean {
    return this.fenced(epoch, () => this.tables.ledger.addPage(entries));
  }

  remember(epoch: number, entries: LedgerEntry[]): boolean {
    if (!this.holds(epoch)) return false;
    this.host.transaction(() => this.tables.ledger.add(entries));
    return true;
  }

  /** Writes what idle runs left in memory once the row on disk is due (see idle-runs.ts). */
  writeIfDue(now: number): void {
    writeIfDue(this.host, now);
  }

  persistLease(epoch: number): boolean {
    if (!this.holds(epoch)) return false;
    if (leaseInMemory(this.host, epoch)) this.host.flush();
    return true;
  }

  finishRun(epoch: number, run: RunRecord, next: RunAftermath, commit?: WindowCommit): boolean {
    const idle = { history: this.tables.history, failures: this.tables.failures };
    // A round's token is a write of its own: never left waiting in memory.
    if (commit?.round === undefined && finishInMemory(this.host, idle, epoch, run, next, commit)) {
      this.tables.deadLetters.prune(run.finishedAt);
      return true;
    }
    const finished = this.host.transaction(() => {
      if (!this.holds(epoch)) return false;
      if (commit?.round) this.tables.rounds.commit(commit.round);
      const ledger = commit ? this.commitLedger(commit.remember, commit.pruneBelow) : null;
      const history = this.tables.history.finish(run);
      // One write of the state row ends the run, and comes last, so that the write counters
      // it brings up to date include the run's every row: the lease, what comes next, the
      // counters, the window's commit when it ends with one, an idle run's history line.
      const released = this.host.updateState(
        `lease_held = 0, failures = ?, wakeup_at = ?, wakeup_reason = ?, wakeup_failure = ?,
           upstream_skew_ms = COALESCE(?, upstream_skew_ms), rate_limited_until = ?,
           stall_from = ?, stall_pages = ?, straggle_ms = MAX(straggle_ms, ?), written_at = ?,
           ${FINISH_SET}${ledger ? `, ${COMMIT_SET}` : ''}`,
        FENCE,
        next.failures,
        next.wakeup?.at ?? null,
        next.wakeup?.reason ?? null,
        next.wakeup?.failure ?? null,
        next.skewMs === null ? null : Math.round(next.skewMs),
        next.rateLimitedUntil,
        next.stall?.from ?? null,
        next.stall?.pages ?? null,
        next.straggleMs,
        run.finishedAt,
        ...history,
        ...(commit && ledger ? commitBindings(commit.checkpoint, ledger) : []),
        epoch,
      );
      // Not reached: the fence was checked above, in this same transaction.
      if (released === 0) throw new Error('the lease was lost mid-transaction');
      return true;
    });
    // The run's end is the cheap moment to keep the dead letters within their bounds.
    if (finished) this.tables.deadLetters.prune(run.finishedAt);
    return finished;
  }

  recordRun(run: RunRecord): void {
    this.tables.history.record(run);
  }

  recordRecovery(run: RunRecord): void {
    this.tables.history.recordRecovery(run);
  }

  failing(): Map<string, FailingUpdate> {
    return this.tables.failures.all();
  }

  /** How many updates are failing and since when the oldest (R19); null when none is. */
  retrying(): { count: number; oldestSince: number } | null {
    return this.tables.failures.retrying();
  }

  /** Each failing update's key, id, version and attempts, without its record (R19). */
  retryingVersions(): { key: string; id: string; versionMs: number; attempts: number }[] {
    return this.tables.failures.versions();
  }

  recordFailure(epoch: number, failure: FailingUpdate): boolean {
    return this.fenced(epoch, () => this.tables.failures.record(failure));
  }

  clearFailure(epoch: number, key: string): boolean {
    return this.fenced(epoch, () => this.tables.failures.clear(key));
  }

  deadLetter(epoch: number, letter: DeadLetter): boolean {
    return this.fenced(epoch, () => {
      this.tables.deadLetters.insert(letter);
      this.tables.failures.clear(letter.key);
      // Handled now (R8): the ledger keeps the window's retry from trying it again.
      if (
        letter.kind === 'delivery' &&
        letter.id !== null &&
        letter.version !== null &&
        letter.versionMs !== null
      ) {
        const { id, version, versionMs } = letter;
        this.tables.ledger.add([{ id, version, versionMs }]);
      }
    });
  }

  idsOf(ids: readonly string[]): Map<string, RememberedId> {
    return this.tables.ids.of(ids);
  }

  rememberIds(epoch: number, entries: readonly RememberedId[]): boolean {
    return this.fenced(epoch, () => this.tables.ids.remember(entries));
  }

  protected fenced(epoch: number, write: () => unknown): boolean {
    return this.host.transaction(() => {
      if (!this.holds(epoch)) return false;
      write();
      return true;
    });
  }

  /**
   * The ledger's part of a commit (see Ledger.commit). A failing version below `pruneBelow`
   * stays stored: it is retried from its record until delivered or a dead letter (R19).
   */
  private commitLedger(remember: LedgerEntry[], pruneBelow: number): LedgerCommit {
    return this.tables.ledger.commit(remember, pruneBelow);
  }
}
