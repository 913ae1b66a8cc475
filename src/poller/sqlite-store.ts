import { formatDuration } from '../config/duration.ts';
import { isoTime } from '../engine/iso-time.ts';
import type { Lease } from '../engine/lease.ts';
import {
  type DeadLetter,
  type FailingUpdate,
  type Json,
  type LedgerEntry,
  ledgerKey,
  type PollerState,
  type PollerStore,
  type RunAftermath,
  type RunOutcome,
  type RunRecord,
  type TriggerKind,
  type Wakeup,
  type WindowCommit,
} from '../engine/ports.ts';
import { recordToText } from './record-text.ts';

/** Runs kept in history. */
export const HISTORY_LIMIT = 100;

/** Audit entries kept: the newest, the older ones pruned as each new one is written. */
export const AUDIT_LIMIT = 1_000;

/** Dead letters kept at most per poller; beyond it the oldest are pruned (audited). */
export const DEAD_LETTER_CAP = 10_000;

/** A prune for the cap goes down to this, so that it happens once per many dead letters. */
export const DEAD_LETTER_CAP_PRUNED_TO = 9_000;

/** The most dead letters one run's end prunes: a backlog is worked off over several runs. */
export const DEAD_LETTER_PRUNE_BATCH = 5_000;

/** Expired dead letters are pruned at most this often, so the audit log is not one per run. */
export const DEAD_LETTER_PRUNE_EVERY_MS = 3_600_000;

/** The config's default dead_letter_retention, for a store not told the poller's. */
const DEFAULT_RETENTION_MS = 14 * 86_400_000;

type StateRow = {
  checkpoint: number | null;
  epoch: number;
  lease_trigger: string;
  lease_held: number;
  lease_phase: string;
  lease_started_at: number | null;
  lease_expires_at: number | null;
  wakeup_at: number | null;
  wakeup_reason: string | null;
  wakeup_failure: string | null;
  failures: number;
  upstream_skew_ms: number | null;
  rate_limited_until: number | null;
  stall_from: number | null;
  stall_pages: number | null;
  paused: number;
  straggle_ms: number;
  scope_from: number | null;
  next_tick_at: number | null;
  runs: number;
  successes: number;
  failed_runs: number;
  continued_runs: number;
  skipped: number;
  recoveries: number;
  records_delivered: number;
  first_seen_at: number | null;
  ledger_rows: number;
  ledger_bytes: number;
  ledger_boundary: string | null;
  failure_rows: number;
  failure_bytes: number;
  dead_letter_rows: number;
  dead_letter_bytes: number;
  audit_rows: number;
  audit_bytes: number;
  dead_letters_pruned: number;
  dead_letters_pruned_at: number | null;
};

type FailureRow = {
  key: string;
  id: string;
  version: string;
  version_ms: number;
  record: string;
  attempts: number;
  first_failure: number;
  last_failure: number;
  last_error: string;
};

type DeadLetterRow = {
  key: string;
  kind: string;
  id: string | null;
  version: string | null;
  version_ms: number | null;
  record: string;
  record_bytes: number;
  error: string;
  attempts: number;
  first_failure: number;
  last_failure: number;
};

/**
 * A dead letter as stored: its record still as the JSON text it was kept as, so that reading
 * one never parses (or recurses through) a record too deep or too big to serve as JSON.
 */
export type StoredDeadLetter = Omit<DeadLetter, 'record'> & {
  recordText: string;
  /** The text's size in UTF-8 bytes. */
  recordBytes: number;
};

/** The columns of a dead letter, with its record's size measured by SQLite. */
const DEAD_LETTER_COLUMNS = `key, kind, id, version, version_ms, record, octet_length(record) AS record_bytes,
  error, attempts, first_failure, last_failure`;

function fromFailureRow(row: FailureRow): FailingUpdate {
  return {
    key: row.key,
    id: row.id,
    version: row.version,
    versionMs: row.version_ms,
    record: JSON.parse(row.record) as unknown,
    attempts: row.attempts,
    firstFailure: row.first_failure,
    lastFailure: row.last_failure,
    lastError: row.last_error,
  };
}

function fromDeadLetterRow(row: DeadLetterRow): StoredDeadLetter {
  return {
    key: row.key,
    kind: row.kind === 'unreadable' ? 'unreadable' : 'delivery',
    id: row.id,
    version: row.version,
    versionMs: row.version_ms,
    recordText: row.record,
    recordBytes: row.record_bytes,
    error: row.error,
    attempts: row.attempts,
    firstFailure: row.first_failure,
    lastFailure: row.last_failure,
  };
}

type RunRow = {
  epoch: number;
  trigger: string;
  outcome: string;
  started_at: number;
  finished_at: number;
  windows: number;
  pages: number;
  records: number;
  dead_lettered: number;
  error: string | null;
  checkpoint: number | null;
};

export interface Counters {
  runs: number;
  successes: number;
  failures: number;
  continued: number;
  skipped: number;
  recoveries: number;
  records_delivered: number;
  /** Dead letters pruned for age (dead_letter_retention) or beyond DEAD_LETTER_CAP. */
  dead_letters_pruned: number;
}

/** The tables of a poller's storage. */
export const TABLES = ['ledger', 'runs', 'delivery_failures', 'dead_letters', 'audit_log'] as const;

/** Rows and approximate bytes (the stored text plus a fixed estimate per row) of each table. */
export type TableSizes = Record<(typeof TABLES)[number], { rows: number; bytes: number }>;

/** A ledger row's approximate size, as SQL over its columns (see migration 6). */
const LEDGER_ROW_BYTES = 'octet_length(id) + octet_length(version) + 8';

/** The fence of R6, in SQL: a write applies only while the stored lease is the run's own. */
const FENCE = 'WHERE id = 1 AND epoch = ? AND lease_held = 1';

/** What a commit sets in the state row; bound by commitBindings. */
const COMMIT_SET = `checkpoint = ?, scope_from = COALESCE(scope_from, checkpoint, ?),
  ledger_rows = ledger_rows + ?, ledger_bytes = ledger_bytes + ?, ledger_boundary = ?`;

/** The ledger's side of a commit, for the state row. */
interface LedgerCommit {
  /** The boundary kept in the state row (JSON), or null when there is none or it is in the table. */
  boundary: string | null;
  /** Rows and bytes the ledger table gained (or lost). */
  rows: number;
  bytes: number;
}

function commitBindings(checkpoint: number, ledger: LedgerCommit): unknown[] {
  return [checkpoint, checkpoint, ledger.rows, ledger.bytes, ledger.boundary];
}

/**
 * The largest boundary kept in the state row, as JSON. A window's boundary is usually a few
 * deliveries (those stamped in the second below the next window's start): written with the
 * checkpoint, it costs no row of its own. A larger one goes to the ledger table.
 */
export const BOUNDARY_MAX_CHARS = 8_192;

function encodeBoundary(entries: LedgerEntry[]): string | null | undefined {
  if (entries.length === 0) return null;
  const text = JSON.stringify(entries.map((entry) => [entry.id, entry.version, entry.versionMs]));
  return text.length <= BOUNDARY_MAX_CHARS ? text : undefined;
}

function decodeBoundary(text: string | null): LedgerEntry[] {
  if (text === null) return [];
  return (JSON.parse(text) as [string, string, number][]).map(([id, version, versionMs]) => ({
    id,
    version,
    versionMs,
  }));
}

/** Entries of both lists, each `(id, version)` once. */
function mergeEntries(kept: LedgerEntry[], added: LedgerEntry[]): LedgerEntry[] {
  if (kept.length === 0) return added;
  const seen = new Set(kept.map((entry) => ledgerKey(entry.id, entry.version)));
  return [...kept, ...added.filter((entry) => !seen.has(ledgerKey(entry.id, entry.version)))];
}

/** A run that found nothing to do: its line waits in the state row (see finishRun). */
function isIdle(run: RunRecord): boolean {
  return (
    run.outcome === 'success' && run.records === 0 && run.deadLettered === 0 && run.error === null
  );
}

/** PollerStore over the Durable Object's SQLite storage. */
export class SqliteStore implements PollerStore {
  private readonly sql: SqlStorage;
  /**
   * Rows (SQLite's own count: index rows included) and alarm writes since the counters in
   * the state row were last brought up to date: they are, by the next write of that row.
   */
  private pendingRows = 0;
  private pendingAlarms = 0;
  /** Other writers to this object's database (its freshness store), counted here too. */
  private readonly writers: { readonly rowsWritten: number }[] = [];
  private writersCounted = 0;
  /** How long dead letters are kept: the poller's dead_letter_retention, set by its object. */
  deadLetterRetention = DEFAULT_RETENTION_MS;
  /**
   * The state row as last read, until this store writes anything. It is read many times a
   * run (holds() after every page and batch, read() by every step), and only this object's
   * writes can change it: all of them go through write() and returning() (the row's
   * counters are kept by triggers on this store's own tables), which drop it, as do a
   * rolled-back transaction and forget(), for a deleteAll() from outside the store.
   */
  private stateRow: Readonly<StateRow> | null = null;

  constructor(
    private readonly storage: DurableObjectStorage,
    /**
     * The object's life this store was made for (poller/incarnation.ts): once it ended (the
     * object was erased), every write is refused and holds() is false, so a run of a deleted
     * poller commits nothing into the tables of the one created again under its name (R14).
     */
    private readonly life: { readonly live: boolean } = { live: true },
  ) {
    this.sql = storage.sql;
  }

  /** Runs a write statement; counts and returns the rows it wrote. */
  private write(query: string, ...bindings: unknown[]): number {
    this.stateRow = null;
    if (!this.life.live) return 0;
    const cursor = this.sql.exec(query, ...bindings);
    cursor.toArray();
    this.pendingRows += cursor.rowsWritten;
    return cursor.rowsWritten;
  }

  /**
   * Runs an UPDATE of the state row (`set`, then `where`), bringing the write counters up to
   * date in the same statement: what Cloudflare bills is counted with no row more, and
   * survives restarts. Returns the rows it wrote.
   */
  private updateState(set: string, where: string, ...bindings: unknown[]): number {
    const own = this.pendingRows + 1; // and its own row
    const others = this.othersPending();
    const alarms = this.pendingAlarms;
    const written = this.write(
      `UPDATE poller_state SET rows_written = rows_written + ?, alarm_writes = alarm_writes + ?,
         ${set} ${where}`,
      own + others,
      alarms,
      ...bindings,
    );
    if (written > 0) {
      this.pendingRows -= own;
      this.writersCounted += others;
      this.pendingAlarms -= alarms;
    }
    return written;
  }

  /** Counts the rows another writer to this database writes (it keeps a running count). */
  countRowsOf(writer: { readonly rowsWritten: number }): void {
    this.writers.push(writer);
    this.writersCounted += writer.rowsWritten;
  }

  private othersPending(): number {
    let total = 0;
    for (const writer of this.writers) total += writer.rowsWritten;
    return total - this.writersCounted;
  }

  /** Counts a set or delete of the alarm, which Cloudflare bills as a row written. */
  countAlarmWrite(): void {
    this.pendingAlarms += 1;
  }

  /** Rows and alarm writes of this object so far: the persisted counters and the pending. */
  writeCounts(): { rows: number; alarms: number } {
    const row = this.sql
      .exec<{ rows_written: number; alarm_writes: number }>(
        'SELECT rows_written, alarm_writes FROM poller_state WHERE id = 1',
      )
      .one();
    return {
      rows: row.rows_written + this.pendingRows + this.othersPending(),
      alarms: row.alarm_writes + this.pendingAlarms,
    };
  }

  /** Runs a write statement with RETURNING; counts the rows it wrote and returns the rows. */
  private returning<T extends Record<string, SqlStorageValue>>(
    query: string,
    ...bindings: unknown[]
  ): T[] {
    this.stateRow = null;
    if (!this.life.live) return [];
    const cursor = this.sql.exec<T>(query, ...bindings);
    const rows = cursor.toArray();
    this.pendingRows += cursor.rowsWritten;
    return rows;
  }

  read(): PollerState {
    const row = this.row();
    return {
      checkpoint: row.checkpoint,
      lease: {
        epoch: row.epoch,
        trigger: row.lease_trigger as TriggerKind,
        held: row.lease_held === 1,
        phase: row.lease_phase === 'running' ? 'running' : 'acquired',
        startedAt: row.lease_started_at,
        expiresAt: row.lease_expires_at,
      },
      wakeup:
        row.wakeup_at === null
          ? null
          : {
              at: row.wakeup_at,
              reason: row.wakeup_reason === 'continuation' ? 'continuation' : 'retry',
              ...(row.wakeup_failure
                ? { failure: row.wakeup_failure as NonNullable<Wakeup['failure']> }
                : {}),
            },
      failures: row.failures,
      skewMs: row.upstream_skew_ms,
      rateLimitedUntil: row.rate_limited_until,
      stall:
        row.stall_from === null || row.stall_pages === null
          ? null
          : { from: row.stall_from, pages: row.stall_pages },
      paused: row.paused === 1,
      straggleMs: row.straggle_ms,
      scopeFrom: row.scope_from,
      nextTickAt: row.next_tick_at,
    };
  }

  /** Pauses or resumes the poller (an admin action, not a run's: not fenced). */
  setPaused(paused: boolean): void {
    this.updateState('paused = ?', 'WHERE id = 1', paused ? 1 : 0);
  }

  /**
   * Moves C by hand, unless a lease is held (the run would overwrite it). Backward is a
   * backfill: the ledger is cleared so that the window is delivered again in full. Pending
   * delivery failures stay: a failing version the upstream no longer lists exists only in
   * its stored record, and the next runs retry it from there until it is delivered or
   * dead-lettered (R8).
   */
  moveCheckpoint(at: number): boolean {
    return this.transaction(() => {
      const moved = this.updateState(
        `checkpoint = ?, scope_from = MIN(COALESCE(scope_from, ?), ?),
           stall_from = NULL, stall_pages = NULL, ledger_rows = 0, ledger_bytes = 0,
           ledger_boundary = NULL`,
        'WHERE id = 1 AND lease_held = 0',
        at,
        at,
        at,
      );
      if (moved === 0) return false;
      this.write('DELETE FROM ledger');
      return true;
    });
  }

  acquire(expectedEpoch: number, lease: Lease, nextTickAt?: number | null): boolean {
    return (
      this.updateState(
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
    this.updateState('next_tick_at = ?', 'WHERE id = 1', at);
  }

  releaseIdle(epoch: number, now: number): boolean {
    const where = `${FENCE} AND (lease_phase = 'acquired' OR lease_expires_at <= ?)`;
    return this.updateState('lease_held = 0', where, epoch, now) > 0;
  }

  markRunning(epoch: number, expiresAt: number): boolean {
    // Compare-and-set on the phase too: of two alarm invocations, only one starts the run.
    const set = `lease_phase = 'running', lease_expires_at = ?`;
    return this.updateState(set, `${FENCE} AND lease_phase = 'acquired'`, expiresAt, epoch) > 0;
  }

  /**
   * Takes the lease for a dead-letter replay (R4): the next epoch, straight to "running" so
   * that no alarm starts a run under it, and without touching a booked retry or continuation,
   * which still comes after it. Null when a lease is held.
   */
  holdForReplay(expectedEpoch: number, startedAt: number, expiresAt: number): number | null {
    const epoch = expectedEpoch + 1;
    const taken = this.updateState(
      `epoch = ?, lease_trigger = 'replay', lease_held = 1, lease_phase = 'running',
         lease_started_at = ?, lease_expires_at = ?`,
      'WHERE id = 1 AND epoch = ? AND lease_held = 0',
      epoch,
      startedAt,
      expiresAt,
      expectedEpoch,
    );
    return taken > 0 ? epoch : null;
  }

  /** Gives back a replay's lease; fenced, as a recovery may have taken an expired one over. */
  releaseReplay(epoch: number): boolean {
    return this.updateState('lease_held = 0', FENCE, epoch) > 0;
  }

  delivered(from: number): Set<string> {
    const keys = new Set<string>();
    for (const row of this.sql.exec<{ id: string; version: string }>(
      'SELECT id, version FROM ledger WHERE version_ms >= ?',
      from,
    )) {
      keys.add(ledgerKey(row.id, row.version));
    }
    for (const entry of this.boundary()) {
      if (entry.versionMs >= from) keys.add(ledgerKey(entry.id, entry.version));
    }
    return keys;
  }

  commitWindow(
    epoch: number,
    checkpoint: number,
    remember: LedgerEntry[],
    pruneBelow: number,
  ): boolean {
    return this.transaction(() => {
      if (!this.holds(epoch)) return false;
      const ledger = this.commitLedger(remember, pruneBelow);
      // The ledger's size and boundary ride on the checkpoint's own row write.
      this.updateState(COMMIT_SET, FENCE, ...commitBindings(checkpoint, ledger), epoch);
      return true;
    });
  }

  /**
   * The ledger's part of a commit: the new boundary (kept in the state row while it is small,
   * in the ledger table otherwise), the rows below `pruneBelow` pruned, and failing versions
   * below it made dead letters. Returns what the state row must say of the ledger.
   */
  private commitLedger(remember: LedgerEntry[], pruneBelow: number): LedgerCommit {
    const state = this.row();
    const kept = decodeBoundary(state.ledger_boundary).filter(
      (entry) => entry.versionMs >= pruneBelow,
    );
    const entries = mergeEntries(kept, remember);
    let boundary = encodeBoundary(entries);
    let added = { rows: 0, bytes: 0 };
    if (boundary === undefined) {
      // Too big for the state row (a long overlap at a high rate): in the table, as rows.
      added = this.insertLedger(entries);
      boundary = null;
    }
    let droppedRows = 0;
    let droppedBytes = 0;
    if (state.ledger_rows + added.rows > 0) {
      for (const row of this.returning<{ bytes: number }>(
        `DELETE FROM ledger WHERE version_ms < ? RETURNING ${LEDGER_ROW_BYTES} AS bytes`,
        pruneBelow,
      )) {
        droppedRows += 1;
        droppedBytes += row.bytes;
      }
    }
    // A failing version the upstream no longer shows (the record moved on) is below C now
    // and will never be asked for again: it becomes a dead letter, never silently dropped.
    // (None failing, as the triggers count them: nothing to look at.)
    if (state.failure_rows > 0) {
      this.write(
        `INSERT OR IGNORE INTO dead_letters
           (key, kind, id, version, version_ms, record, error, attempts, first_failure, last_failure)
         SELECT key, 'delivery', id, version, version_ms, record,
           'superseded while failing (the upstream stopped showing this version); last error: ' || last_error,
           attempts, first_failure, last_failure
         FROM delivery_failures WHERE version_ms < ?`,
        pruneBelow,
      );
      this.write('DELETE FROM delivery_failures WHERE version_ms < ?', pruneBelow);
    }
    return { boundary, rows: added.rows - droppedRows, bytes: added.bytes - droppedBytes };
  }

  /** The ledger's boundary, as kept in the state row. */
  private boundary(): LedgerEntry[] {
    return decodeBoundary(this.row().ledger_boundary);
  }

  remember(epoch: number, entries: LedgerEntry[]): boolean {
    if (!this.holds(epoch)) return false;
    this.transaction(() => this.addLedger(entries));
    return true;
  }

  finishRun(epoch: number, run: RunRecord, next: RunAftermath, commit?: WindowCommit): boolean {
    const finished = this.transaction(() => {
      if (!this.holds(epoch)) return false;
      const ledger = commit ? this.commitLedger(commit.remember, commit.pruneBelow) : null;
      const idle = isIdle(run);
      if (!idle) {
        const waiting = this.idleRun();
        if (waiting) this.insertRun(waiting);
        this.insertRun(run);
      }
      // One write of the state row ends the run, and comes last, so that the write counters
      // it brings up to date include the run's every row: the lease, what comes next, the
      // counters, the window's commit when it ends with one, an idle run's history line.
      const released = this.updateState(
        `lease_held = 0, failures = ?, wakeup_at = ?, wakeup_reason = ?, wakeup_failure = ?,
           upstream_skew_ms = COALESCE(?, upstream_skew_ms), rate_limited_until = ?,
           stall_from = ?, stall_pages = ?, straggle_ms = MAX(straggle_ms, ?),
           runs = runs + 1,
           successes = successes + ?, failed_runs = failed_runs + ?, continued_runs = continued_runs + ?,
           records_delivered = records_delivered + ?, idle_run = ?${ledger ? `, ${COMMIT_SET}` : ''}`,
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
        run.outcome === 'success' ? 1 : 0,
        run.outcome === 'failed' ? 1 : 0,
        run.outcome === 'continued' ? 1 : 0,
        run.records,
        idle ? JSON.stringify(run) : null,
        ...(commit && ledger ? commitBindings(commit.checkpoint, ledger) : []),
        epoch,
      );
      // Not reached: the fence was checked above, in this same transaction.
      if (released === 0) throw new Error('the lease was lost mid-transaction');
      return true;
    });
    // The run's end is the cheap moment to keep the dead letters within their bounds.
    if (finished) this.pruneDeadLetters(run.finishedAt);
    return finished;
  }

  recordRun(run: RunRecord): void {
    this.transaction(() => {
      const waiting = this.idleRun();
      if (waiting) this.insertRun(waiting);
      this.insertRun(run);
      if (run.outcome === 'skipped' || waiting)
        this.updateState(
          'skipped = skipped + ?, idle_run = NULL',
          'WHERE id = 1',
          run.outcome === 'skipped' ? 1 : 0,
        );
    });
  }

  recordRecovery(run: RunRecord): void {
    this.transaction(() => {
      const waiting = this.idleRun();
      if (waiting) this.insertRun(waiting);
      this.insertRun(run);
      this.updateState('recoveries = recoveries + 1, idle_run = NULL', 'WHERE id = 1');
    });
  }

  /** The last run when it was idle: kept in the state row, not yet a line of the ring. */
  private idleRun(): RunRecord | null {
    const row = this.sql
      .exec<{ idle_run: string | null }>('SELECT idle_run FROM poller_state WHERE id = 1')
      .one();
    return row.idle_run === null ? null : (JSON.parse(row.idle_run) as RunRecord);
  }

  failing(): Map<string, FailingUpdate> {
    const rows = this.sql.exec<FailureRow>('SELECT * FROM delivery_failures').toArray();
    return new Map(rows.map((row) => [row.key, fromFailureRow(row)]));
  }

  recordFailure(epoch: number, failure: FailingUpdate): boolean {
    return this.fenced(epoch, () =>
      this.write(
        `INSERT INTO delivery_failures (key, id, version, version_ms, record, attempts, first_failure, last_failure, last_error)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET attempts = excluded.attempts, last_failure = excluded.last_failure,
           last_error = excluded.last_error`,
        failure.key,
        failure.id,
        failure.version,
        failure.versionMs,
        recordToText(failure.record),
        failure.attempts,
        failure.firstFailure,
        failure.lastFailure,
        failure.lastError,
      ),
    );
  }

  clearFailure(epoch: number, key: string): boolean {
    return this.fenced(epoch, () => this.write('DELETE FROM delivery_failures WHERE key = ?', key));
  }

  deadLetter(epoch: number, letter: DeadLetter): boolean {
    return this.fenced(epoch, () => {
      this.insertDeadLetter(letter);
      this.write('DELETE FROM delivery_failures WHERE key = ?', letter.key);
      // Handled now (R8): the ledger keeps the window's retry from trying it again.
      if (
        letter.kind === 'delivery' &&
        letter.id !== null &&
        letter.version !== null &&
        letter.versionMs !== null
      ) {
        this.addLedger([{ id: letter.id, version: letter.version, versionMs: letter.versionMs }]);
      }
    });
  }

  /** Keeps a dead letter that did not come from a run (the queue's dead-letter queue). */
  addDeadLetter(letter: DeadLetter): void {
    this.insertDeadLetter(letter);
  }

  private insertDeadLetter(letter: DeadLetter): void {
    this.write(
      `INSERT OR IGNORE INTO dead_letters
         (key, kind, id, version, version_ms, record, error, attempts, first_failure, last_failure)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      letter.key,
      letter.kind,
      letter.id,
      letter.version,
      letter.versionMs,
      recordToText(letter.record),
      letter.error,
      letter.attempts,
      letter.firstFailure,
      letter.lastFailure,
    );
  }

  /**
   * Dead letters oldest first after the `after` key: `limit` of them, or fewer once their
   * records add up to `maxBytes` (always one at least), read one by one so that a page of big
   * records is never all in memory. `more` says whether any is left after the page.
   */
  deadLetters(
    limit: number,
    after?: { firstFailure: number; key: string },
    maxBytes = Number.POSITIVE_INFINITY,
  ): { letters: StoredDeadLetter[]; more: boolean } {
    const rows = after
      ? this.sql.exec<DeadLetterRow>(
          `SELECT ${DEAD_LETTER_COLUMNS} FROM dead_letters WHERE (first_failure, key) > (?, ?)
           ORDER BY first_failure, key LIMIT ?`,
          after.firstFailure,
          after.key,
          limit + 1,
        )
      : this.sql.exec<DeadLetterRow>(
          `SELECT ${DEAD_LETTER_COLUMNS} FROM dead_letters ORDER BY first_failure, key LIMIT ?`,
          limit + 1,
        );
    const letters: StoredDeadLetter[] = [];
    let bytes = 0;
    for (const row of rows) {
      if (letters.length >= limit || (letters.length > 0 && bytes + row.record_bytes > maxBytes)) {
        return { letters, more: true };
      }
      letters.push(fromDeadLetterRow(row));
      bytes += row.record_bytes;
    }
    return { letters, more: false };
  }

  findDeadLetter(key: string): StoredDeadLetter | undefined {
    const row = this.sql
      .exec<DeadLetterRow>(`SELECT ${DEAD_LETTER_COLUMNS} FROM dead_letters WHERE key = ?`, key)
      .toArray()[0];
    return row ? fromDeadLetterRow(row) : undefined;
  }

  /** Removes a dead letter (replayed or discarded) and writes the audit line, together. */
  removeDeadLetter(key: string, audit: { at: number; action: string; detail: Json }): boolean {
    return this.transaction(() => {
      const removed = this.write('DELETE FROM dead_letters WHERE key = ?', key) > 0;
      if (removed) this.appendAudit(audit);
      return removed;
    });
  }

  /** Records one more failed attempt at replaying a dead letter. */
  updateDeadLetter(key: string, error: string, at: number): void {
    this.write(
      'UPDATE dead_letters SET error = ?, last_failure = ?, attempts = attempts + 1 WHERE key = ?',
      error,
      at,
      key,
    );
  }

  /**
   * How many dead letters there are (a maintained counter), and the first failure of the
   * oldest (one row of the age index): never a count over the table.
   */
  deadLetterSummary(): { count: number; oldest: number | null } {
    const oldest = this.sql
      .exec<{ first_failure: number }>(
        'SELECT first_failure FROM dead_letters ORDER BY first_failure, key LIMIT 1',
      )
      .toArray()[0];
    return { count: this.row().dead_letter_rows, oldest: oldest?.first_failure ?? null };
  }

  /**
   * Prunes the dead letters past dead_letter_retention (counted from their first failure) or
   * beyond DEAD_LETTER_CAP, oldest first, at most DEAD_LETTER_PRUNE_BATCH at a time, and writes
   * one audit entry saying how many and which was the oldest. Expired ones are looked for at
   * most every DEAD_LETTER_PRUNE_EVERY_MS (unless the last prune left some behind); the cap is
   * checked every time and prunes down to DEAD_LETTER_CAP_PRUNED_TO. Returns how many went.
   */
  pruneDeadLetters(now: number): number {
    const state = this.row();
    const excess =
      state.dead_letter_rows > DEAD_LETTER_CAP
        ? state.dead_letter_rows - DEAD_LETTER_CAP_PRUNED_TO
        : 0;
    const expiredDue =
      state.dead_letters_pruned_at === null ||
      now - state.dead_letters_pruned_at >= DEAD_LETTER_PRUNE_EVERY_MS;
    if (excess === 0 && !expiredDue) return 0;
    const oldest = this.sql
      .exec<{ key: string; first_failure: number }>(
        'SELECT key, first_failure FROM dead_letters ORDER BY first_failure, key LIMIT 1',
      )
      .toArray()[0];
    const cutoff = now - this.deadLetterRetention;
    if (oldest === undefined || (excess === 0 && oldest.first_failure >= cutoff)) return 0;
    return this.transaction(() => {
      const byCap = this.returning(
        `DELETE FROM dead_letters WHERE key IN
           (SELECT key FROM dead_letters ORDER BY first_failure, key LIMIT ?) RETURNING key`,
        Math.min(excess, DEAD_LETTER_PRUNE_BATCH),
      ).length;
      const byAge = this.returning(
        `DELETE FROM dead_letters WHERE key IN
           (SELECT key FROM dead_letters WHERE first_failure < ? ORDER BY first_failure, key LIMIT ?)
         RETURNING key`,
        cutoff,
        DEAD_LETTER_PRUNE_BATCH - byCap,
      ).length;
      const pruned = byCap + byAge;
      // A batch cut short leaves the time alone, so that the next run's end goes on at once.
      const left = pruned >= DEAD_LETTER_PRUNE_BATCH;
      this.updateState(
        `dead_letters_pruned = dead_letters_pruned + ?,
           dead_letters_pruned_at = CASE WHEN ? THEN dead_letters_pruned_at ELSE ? END`,
        'WHERE id = 1',
        pruned,
        left ? 1 : 0,
        now,
      );
      this.appendAudit({
        at: now,
        action: 'dead_letter.pruned',
        detail: {
          count: pruned,
          oldest_key: oldest.key,
          oldest_first_failure: isoTime(oldest.first_failure),
          past_retention: byAge,
          beyond_cap: byCap,
          retention: formatDuration(this.deadLetterRetention),
          cap: DEAD_LETTER_CAP,
          more_left: left,
        },
      });
      return pruned;
    });
  }

  /** Writes an audit entry, and drops the ones beyond the newest AUDIT_LIMIT (by key range). */
  appendAudit(entry: { at: number; action: string; detail: Json }): void {
    const [added] = this.returning<{ seq: number }>(
      'INSERT INTO audit_log (at, action, detail) VALUES (?, ?, ?) RETURNING seq',
      entry.at,
      entry.action,
      JSON.stringify(entry.detail),
    );
    if (added) this.write('DELETE FROM audit_log WHERE seq <= ?', added.seq - AUDIT_LIMIT);
  }

  auditLog(limit: number): { at: number; action: string; detail: Json }[] {
    return this.sql
      .exec<{ at: number; action: string; detail: string }>(
        'SELECT at, action, detail FROM audit_log ORDER BY seq DESC LIMIT ?',
        limit,
      )
      .toArray()
      .map((row) => ({ at: row.at, action: row.action, detail: JSON.parse(row.detail) as Json }));
  }

  /** Notes when this object first saw its poller (a status call, a trigger): once. */
  seen(now: number): void {
    this.write(
      'UPDATE poller_state SET first_seen_at = ? WHERE id = 1 AND first_seen_at IS NULL',
      now,
    );
  }

  firstSeenAt(): number | null {
    return this.row().first_seen_at;
  }

  /** A runtime poller's config as written (JSON) and its version; null for a static poller. */
  runtimeConfig(): { config: unknown; text: string; version: number } | null {
    const text = this.meta('config');
    const version = Number(this.meta('config_version') ?? 0);
    return text === null ? null : { config: JSON.parse(text) as unknown, text, version };
  }

  setRuntimeConfig(config: string, version: number): void {
    this.transaction(() => {
      this.setMeta('config', config);
      this.setMeta('config_version', String(version));
    });
  }

  /** The runtime incarnation this object runs (set by its configure), or null. */
  incarnation(): number | null {
    const value = this.meta('incarnation');
    return value === null ? null : Number(value);
  }

  /** The newest incarnation erased here (0 when none): a config for it or an older one is refused. */
  erasedIncarnation(): number {
    return Number(this.meta('erased_incarnation') ?? 0);
  }

  setIncarnation(incarnation: number): void {
    this.setMeta('incarnation', String(incarnation));
  }

  /**
   * Just after an erase, in the fresh tables: the tombstone of the incarnation erased, and
   * the epoch it had reached, so the next incarnation's first run takes the one after and no
   * epoch is ever seen twice by this object (R14).
   */
  markErased(incarnation: number, epoch: number): void {
    this.transaction(() => {
      this.setMeta('erased_incarnation', String(incarnation));
      this.write('UPDATE poller_state SET epoch = ? WHERE id = 1', epoch);
    });
  }

  /** The registry lists this poller (it was configured, or the watchdog visited it). */
  registered(): boolean {
    return this.meta('registered') === '1';
  }

  markRegistered(): void {
    if (!this.registered()) this.setMeta('registered', '1');
  }

  /** What this poller last told the registry, and when. */
  lastReport(): {
    state: string;
    checkpoint: number | null;
    deadLetters: number;
    atFault?: boolean;
    at: number;
  } | null {
    const text = this.sql
      .exec<{ last_report: string | null }>('SELECT last_report FROM poller_state WHERE id = 1')
      .one().last_report;
    return text === null ? null : (JSON.parse(text) as ReturnType<SqliteStore['lastReport']>);
  }

  setLastReport(report: {
    state: string;
    checkpoint: number | null;
    deadLetters: number;
    atFault: boolean;
    at: number;
  }): void {
    // In the state row, whose write brings the write counters up to date: a report made
    // after a run's end is counted in storage at once, not at the next run.
    this.updateState('last_report = ?', 'WHERE id = 1', JSON.stringify(report));
  }

  private meta(key: string): string | null {
    return (
      this.sql.exec<{ value: string }>('SELECT value FROM meta WHERE key = ?', key).toArray()[0]
        ?.value ?? null
    );
  }

  private setMeta(key: string, value: string): void {
    this.write(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      key,
      value,
    );
  }

  /**
   * Rows and approximate bytes of each table, from the counters kept on every write; the run
   * history, capped at HISTORY_LIMIT rows, is measured (a bounded read).
   */
  tableSizes(): TableSizes {
    const state = this.row();
    const runs = this.sql
      .exec<{ rows: number; bytes: number }>(
        `SELECT COUNT(*) AS rows,
           COALESCE(SUM(octet_length(trigger) + octet_length(outcome) + COALESCE(octet_length(error), 0) + 72), 0) AS bytes
         FROM runs`,
      )
      .one();
    return {
      ledger: { rows: state.ledger_rows, bytes: state.ledger_bytes },
      runs,
      delivery_failures: { rows: state.failure_rows, bytes: state.failure_bytes },
      dead_letters: { rows: state.dead_letter_rows, bytes: state.dead_letter_bytes },
      audit_log: { rows: state.audit_rows, bytes: state.audit_bytes },
    };
  }

  /** The whole database's size in bytes, as the platform counts it. */
  databaseBytes(): number {
    return this.sql.databaseSize;
  }

  private fenced(epoch: number, write: () => unknown): boolean {
    return this.transaction(() => {
      if (!this.holds(epoch)) return false;
      write();
      return true;
    });
  }

  counters(): Counters {
    const row = this.row();
    return {
      runs: row.runs,
      successes: row.successes,
      failures: row.failed_runs,
      continued: row.continued_runs,
      skipped: row.skipped,
      recoveries: row.recoveries,
      records_delivered: row.records_delivered,
      dead_letters_pruned: row.dead_letters_pruned,
    };
  }

  /** The latest runs, newest first: the idle one waiting in the state row, then the ring. */
  runs(limit = HISTORY_LIMIT): RunRecord[] {
    const waiting = this.idleRun();
    const lines = this.sql
      .exec<RunRow>('SELECT * FROM runs ORDER BY seq DESC LIMIT ?', waiting ? limit - 1 : limit)
      .toArray()
      .map((row) => ({
        epoch: row.epoch,
        trigger: row.trigger as TriggerKind,
        outcome: row.outcome as RunOutcome,
        startedAt: row.started_at,
        finishedAt: row.finished_at,
        windows: row.windows,
        pages: row.pages,
        records: row.records,
        deadLettered: row.dead_lettered,
        error: row.error,
        checkpoint: row.checkpoint,
      }));
    return waiting && limit > 0 ? [waiting, ...lines] : lines;
  }

  /** Ledger entries: the table's rows and the boundary kept in the state row. */
  ledgerSize(): number {
    const rows = this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM ledger').one().n;
    return rows + this.boundary().length;
  }

  holds(epoch: number): boolean {
    if (!this.life.live) return false;
    const row = this.row();
    return row.lease_held === 1 && row.epoch === epoch;
  }

  /** A transaction; one rolled back may have undone what holds() read inside it. */
  private transaction<T>(work: () => T): T {
    try {
      return this.storage.transactionSync(work);
    } catch (error) {
      this.stateRow = null;
      throw error;
    }
  }

  /** The storage was changed outside this store (deleteAll): nothing read before holds. */
  forget(): void {
    this.stateRow = null;
  }

  /** Inserts ledger entries not there yet; says how many rows and bytes that added. */
  private insertLedger(entries: LedgerEntry[]): { rows: number; bytes: number } {
    let rows = 0;
    let bytes = 0;
    for (const entry of entries) {
      for (const row of this.returning<{ bytes: number }>(
        `INSERT OR IGNORE INTO ledger (id, version, version_ms) VALUES (?, ?, ?) RETURNING ${LEDGER_ROW_BYTES} AS bytes`,
        entry.id,
        entry.version,
        entry.versionMs,
      )) {
        rows += 1;
        bytes += row.bytes;
      }
    }
    return { rows, bytes };
  }

  /** Inserts ledger entries and counts them in the ledger's size. */
  private addLedger(entries: LedgerEntry[]): void {
    const added = this.insertLedger(entries);
    if (added.rows === 0) return;
    this.updateState(
      'ledger_rows = ledger_rows + ?, ledger_bytes = ledger_bytes + ?',
      'WHERE id = 1',
      added.rows,
      added.bytes,
    );
  }

  /**
   * A line of history, in the ring's next slot (over the oldest line once the ring is full):
   * one row written, with no sequence row and no prune.
   */
  private insertRun(run: RunRecord): void {
    this.write(
      `INSERT INTO runs (slot, seq, epoch, trigger, outcome, started_at, finished_at, windows, pages, records, dead_lettered, error, checkpoint)
       SELECT next % ${HISTORY_LIMIT}, next, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       FROM (SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM runs) WHERE true
       ON CONFLICT (slot) DO UPDATE SET seq = excluded.seq, epoch = excluded.epoch,
         trigger = excluded.trigger, outcome = excluded.outcome, started_at = excluded.started_at,
         finished_at = excluded.finished_at, windows = excluded.windows, pages = excluded.pages,
         records = excluded.records, dead_lettered = excluded.dead_lettered, error = excluded.error,
         checkpoint = excluded.checkpoint`,
      run.epoch,
      run.trigger,
      run.outcome,
      run.startedAt,
      run.finishedAt,
      run.windows,
      run.pages,
      run.records,
      run.deadLettered,
      run.error,
      run.checkpoint,
    );
  }

  private row(): Readonly<StateRow> {
    this.stateRow ??= this.sql.exec<StateRow>('SELECT * FROM poller_state WHERE id = 1').one();
    return this.stateRow;
  }
}
