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
} from '../engine/ports.ts';

/** Runs kept in history. */
export const HISTORY_LIMIT = 100;

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
  runs: number;
  successes: number;
  failed_runs: number;
  continued_runs: number;
  skipped: number;
  recoveries: number;
  records_delivered: number;
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
  error: string;
  attempts: number;
  first_failure: number;
  last_failure: number;
};

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

function fromDeadLetterRow(row: DeadLetterRow): DeadLetter {
  return {
    key: row.key,
    kind: row.kind === 'unreadable' ? 'unreadable' : 'delivery',
    id: row.id,
    version: row.version,
    versionMs: row.version_ms,
    record: JSON.parse(row.record) as unknown,
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
}

/** The fence of R6, in SQL: a write applies only while the stored lease is the run's own. */
const FENCE = 'WHERE id = 1 AND epoch = ? AND lease_held = 1';

/** PollerStore over the Durable Object's SQLite storage. */
export class SqliteStore implements PollerStore {
  private readonly sql: SqlStorage;
  /** Rows written by this instance since it started: what Cloudflare bills as storage writes. */
  rowsWritten = 0;

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
  }

  /** Runs a write statement; counts and returns the rows it wrote. */
  private write(query: string, ...bindings: unknown[]): number {
    const cursor = this.sql.exec(query, ...bindings);
    cursor.toArray();
    this.rowsWritten += cursor.rowsWritten;
    return cursor.rowsWritten;
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
    };
  }

  /** Pauses or resumes the poller (an admin action, not a run's: not fenced). */
  setPaused(paused: boolean): void {
    this.write('UPDATE poller_state SET paused = ? WHERE id = 1', paused ? 1 : 0);
  }

  /**
   * Moves C by hand, unless a lease is held (the run would overwrite it). Backward is a
   * backfill: the ledger is cleared so that the window is delivered again in full. Pending
   * delivery failures stay: a failing version the upstream no longer lists exists only in
   * its stored record, and the next runs retry it from there until it is delivered or
   * dead-lettered (R8).
   */
  moveCheckpoint(at: number): boolean {
    return this.storage.transactionSync(() => {
      const moved = this.write(
        'UPDATE poller_state SET checkpoint = ?, stall_from = NULL, stall_pages = NULL WHERE id = 1 AND lease_held = 0',
        at,
      );
      if (moved === 0) return false;
      this.write('DELETE FROM ledger');
      return true;
    });
  }

  acquire(expectedEpoch: number, lease: Lease): boolean {
    return (
      this.write(
        `UPDATE poller_state SET epoch = ?, lease_trigger = ?, lease_held = 1, lease_phase = 'acquired',
           lease_started_at = ?, lease_expires_at = ?, wakeup_at = NULL, wakeup_reason = NULL, wakeup_failure = NULL
         WHERE id = 1 AND epoch = ?`,
        lease.epoch,
        lease.trigger,
        lease.startedAt,
        lease.expiresAt,
        expectedEpoch,
      ) > 0
    );
  }

  releaseIdle(epoch: number, now: number): boolean {
    const sql = `UPDATE poller_state SET lease_held = 0 ${FENCE}
      AND (lease_phase = 'acquired' OR lease_expires_at <= ?)`;
    return this.write(sql, epoch, now) > 0;
  }

  markRunning(epoch: number, expiresAt: number): boolean {
    // Compare-and-set on the phase too: of two alarm invocations, only one starts the run.
    const sql = `UPDATE poller_state SET lease_phase = 'running', lease_expires_at = ?
      ${FENCE} AND lease_phase = 'acquired'`;
    return this.write(sql, expiresAt, epoch) > 0;
  }

  /**
   * Takes the lease for a dead-letter replay (R4): the next epoch, straight to "running" so
   * that no alarm starts a run under it, and without touching a booked retry or continuation,
   * which still comes after it. Null when a lease is held.
   */
  holdForReplay(expectedEpoch: number, startedAt: number, expiresAt: number): number | null {
    const epoch = expectedEpoch + 1;
    const taken = this.write(
      `UPDATE poller_state SET epoch = ?, lease_trigger = 'replay', lease_held = 1, lease_phase = 'running',
         lease_started_at = ?, lease_expires_at = ?
       WHERE id = 1 AND epoch = ? AND lease_held = 0`,
      epoch,
      startedAt,
      expiresAt,
      expectedEpoch,
    );
    return taken > 0 ? epoch : null;
  }

  /** Gives back a replay's lease; fenced, as a recovery may have taken an expired one over. */
  releaseReplay(epoch: number): boolean {
    return this.write(`UPDATE poller_state SET lease_held = 0 ${FENCE}`, epoch) > 0;
  }

  delivered(from: number): Set<string> {
    const keys = new Set<string>();
    for (const row of this.sql.exec<{ id: string; version: string }>(
      'SELECT id, version FROM ledger WHERE version_ms >= ?',
      from,
    )) {
      keys.add(ledgerKey(row.id, row.version));
    }
    return keys;
  }

  commitWindow(
    epoch: number,
    checkpoint: number,
    remember: LedgerEntry[],
    pruneBelow: number,
  ): boolean {
    return this.storage.transactionSync(() => {
      const moved = this.write(
        `UPDATE poller_state SET checkpoint = ? ${FENCE}`,
        checkpoint,
        epoch,
      );
      if (moved === 0) return false;
      this.insertLedger(remember);
      this.write('DELETE FROM ledger WHERE version_ms < ?', pruneBelow);
      // A failing version the upstream no longer shows (the record moved on) is below C now
      // and will never be asked for again: it becomes a dead letter, never silently dropped.
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
      return true;
    });
  }

  remember(epoch: number, entries: LedgerEntry[]): boolean {
    if (!this.holds(epoch)) return false;
    this.storage.transactionSync(() => this.insertLedger(entries));
    return true;
  }

  finishRun(epoch: number, run: RunRecord, next: RunAftermath): boolean {
    return this.storage.transactionSync(() => {
      const released = this.write(
        `UPDATE poller_state SET lease_held = 0, failures = ?, wakeup_at = ?, wakeup_reason = ?, wakeup_failure = ?,
           upstream_skew_ms = COALESCE(?, upstream_skew_ms), rate_limited_until = ?,
           stall_from = ?, stall_pages = ?, straggle_ms = MAX(straggle_ms, ?),
           runs = runs + 1,
           successes = successes + ?, failed_runs = failed_runs + ?, continued_runs = continued_runs + ?,
           records_delivered = records_delivered + ?
         ${FENCE}`,
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
        epoch,
      );
      if (released === 0) return false;
      this.insertRun(run);
      return true;
    });
  }

  recordRun(run: RunRecord): void {
    this.storage.transactionSync(() => {
      if (run.outcome === 'skipped')
        this.write('UPDATE poller_state SET skipped = skipped + 1 WHERE id = 1');
      this.insertRun(run);
    });
  }

  recordRecovery(run: RunRecord): void {
    this.storage.transactionSync(() => {
      this.write('UPDATE poller_state SET recoveries = recoveries + 1 WHERE id = 1');
      this.insertRun(run);
    });
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
        JSON.stringify(failure.record) ?? 'null',
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
        this.insertLedger([
          { id: letter.id, version: letter.version, versionMs: letter.versionMs },
        ]);
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
      JSON.stringify(letter.record) ?? 'null',
      letter.error,
      letter.attempts,
      letter.firstFailure,
      letter.lastFailure,
    );
  }

  /** Dead letters oldest first, `limit` at a time after the `after` key. */
  deadLetters(limit: number, after?: { firstFailure: number; key: string }): DeadLetter[] {
    const rows = after
      ? this.sql.exec<DeadLetterRow>(
          `SELECT * FROM dead_letters WHERE (first_failure, key) > (?, ?)
           ORDER BY first_failure, key LIMIT ?`,
          after.firstFailure,
          after.key,
          limit,
        )
      : this.sql.exec<DeadLetterRow>(
          'SELECT * FROM dead_letters ORDER BY first_failure, key LIMIT ?',
          limit,
        );
    return rows.toArray().map(fromDeadLetterRow);
  }

  findDeadLetter(key: string): DeadLetter | undefined {
    const row = this.sql
      .exec<DeadLetterRow>('SELECT * FROM dead_letters WHERE key = ?', key)
      .toArray()[0];
    return row ? fromDeadLetterRow(row) : undefined;
  }

  /** Removes a dead letter (replayed or discarded) and writes the audit line, together. */
  removeDeadLetter(key: string, audit: { at: number; action: string; detail: Json }): boolean {
    return this.storage.transactionSync(() => {
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

  deadLetterSummary(): { count: number; oldest: number | null } {
    const row = this.sql
      .exec<{ count: number; oldest: number | null }>(
        'SELECT COUNT(*) AS count, MIN(first_failure) AS oldest FROM dead_letters',
      )
      .one();
    return { count: row.count, oldest: row.oldest };
  }

  appendAudit(entry: { at: number; action: string; detail: Json }): void {
    this.write(
      'INSERT INTO audit_log (at, action, detail) VALUES (?, ?, ?)',
      entry.at,
      entry.action,
      JSON.stringify(entry.detail),
    );
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

  private fenced(epoch: number, write: () => unknown): boolean {
    return this.storage.transactionSync(() => {
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
    };
  }

  /** The latest runs, newest first. */
  runs(limit = HISTORY_LIMIT): RunRecord[] {
    return this.sql
      .exec<RunRow>('SELECT * FROM runs ORDER BY seq DESC LIMIT ?', limit)
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
  }

  ledgerSize(): number {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM ledger').one().n;
  }

  holds(epoch: number): boolean {
    // Asked after every page and batch of a run: two columns, not the whole state row.
    const row = this.sql
      .exec<{ epoch: number; lease_held: number }>(
        'SELECT epoch, lease_held FROM poller_state WHERE id = 1',
      )
      .one();
    return row.lease_held === 1 && row.epoch === epoch;
  }

  private insertLedger(entries: LedgerEntry[]): void {
    for (const entry of entries) {
      this.write(
        'INSERT OR IGNORE INTO ledger (id, version, version_ms) VALUES (?, ?, ?)',
        entry.id,
        entry.version,
        entry.versionMs,
      );
    }
  }

  private insertRun(run: RunRecord): void {
    this.write(
      `INSERT INTO runs (epoch, trigger, outcome, started_at, finished_at, windows, pages, records, dead_lettered, error, checkpoint)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
    this.write('DELETE FROM runs WHERE seq <= (SELECT MAX(seq) FROM runs) - ?', HISTORY_LIMIT);
  }

  private row(): StateRow {
    return this.sql.exec<StateRow>('SELECT * FROM poller_state WHERE id = 1').one();
  }
}
