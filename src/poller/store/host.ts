// The SQL host: owns no table. Every write of the store goes through it: transactions,
// metering (poller_state.rows_written, alarm_writes), the state-row cache, the state-row
// write that may wait (deferred), the R14 liveness check.
import type { StateRow } from './state-row.ts';

/** Counters of the state row a deferred write adds to. */
type CounterColumn = 'runs' | 'successes';

/**
 * A write of the state row that waits in memory (see StoreHost.defer): the columns it sets,
 * the counters it adds to, and since when it waits.
 */
interface DeferredWrite {
  set: Partial<StateRow>;
  add: Partial<Record<CounterColumn, number>>;
  since: number;
  /** The latest time it was given: the state row holds the runs up to this once written. */
  last: number;
}

/**
 * The SQL host of a poller's store: owns no table of its own, but every write of the store's
 * tables goes through it. It runs the transactions, counts the rows written (SQLite's own
 * count, index rows included) and the alarm writes, and brings those counters up to date in
 * the state row (`poller_state.rows_written`, `alarm_writes`) with that row's own writes. It
 * keeps the state row as last read, and refuses every write once the object's life it was
 * made for has ended (R14).
 */
export class StoreHost {
  readonly sql: SqlStorage;
  /**
   * Rows (SQLite's own count: index rows included) and alarm writes since the counters in
   * the state row were last brought up to date: they are, by the next write of that row.
   */
  private pendingRows = 0;
  private pendingAlarms = 0;
  /** Other writers to this object's database (its freshness store), counted here too. */
  private readonly writers: { readonly rowsWritten: number }[] = [];
  private writersCounted = 0;
  /**
   * The state row as last read, until this store writes anything. It is read many times a
   * run (holds() after every page and batch, read() by every step), and only this object's
   * writes can change it: all of them go through write() and returning() (the row's
   * counters are kept by triggers on this store's own tables), which drop it, as do a
   * rolled-back transaction and forget(), for a deleteAll() from outside the store.
   */
  private stateRow: Readonly<StateRow> | null = null;
  /**
   * The state row's write that waits (an idle run's lease and end, a registry memo): in
   * memory only, read through row() as if written, and written before any other write of
   * this store, in that write's transaction, so no write ever lands on a row older than
   * what the object has shown. A crash loses it: see PollerStateStore for what that costs.
   */
  private deferred: DeferredWrite | null = null;
  /** row() with the deferred write over it, until either changes. */
  private merged: Readonly<StateRow> | null = null;

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

  /** False once the object's life this store was made for has ended (erased). */
  get live(): boolean {
    return this.life.live;
  }

  /** Runs a write statement (after the deferred write, if any); counts and returns the rows it wrote. */
  write(query: string, ...bindings: unknown[]): number {
    this.flush();
    this.stateRow = null;
    this.merged = null;
    if (!this.life.live) return 0;
    const cursor = this.sql.exec(query, ...bindings);
    cursor.toArray();
    this.pendingRows += cursor.rowsWritten;
    return cursor.rowsWritten;
  }

  /**
   * A write to a table no trigger mirrors into the state row (`ledger_pages`): the state row
   * as last read still holds, so the next holds() reads no row. Counts the rows it wrote.
   */
  writeElsewhere(query: string, ...bindings: unknown[]): number {
    this.flush();
    if (!this.life.live) return 0;
    const cursor = this.sql.exec(query, ...bindings);
    cursor.toArray();
    this.pendingRows += cursor.rowsWritten;
    return cursor.rowsWritten;
  }

  /** Runs a write statement with RETURNING; counts the rows it wrote and returns the rows. */
  returning<T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]): T[] {
    this.flush();
    this.stateRow = null;
    this.merged = null;
    if (!this.life.live) return [];
    const cursor = this.sql.exec<T>(query, ...bindings);
    const rows = cursor.toArray();
    this.pendingRows += cursor.rowsWritten;
    return rows;
  }

  /**
   * Runs an UPDATE of the state row (`set`, then `where`), bringing the write counters up to
   * date in the same statement: what Cloudflare bills is counted with no row more, and
   * survives restarts. Returns the rows it wrote.
   */
  updateState(set: string, where: string, ...bindings: unknown[]): number {
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

  /**
   * A transaction; one rolled back may have undone what holds() read inside it, and the
   * deferred write it made: that one waits again.
   */
  transaction<T>(work: () => T): T {
    const deferred = copyOf(this.deferred);
    try {
      return this.storage.transactionSync(work);
    } catch (error) {
      this.stateRow = null;
      this.merged = null;
      this.deferred ??= deferred;
      throw error;
    }
  }

  /** The state row, as last read (see stateRow), with the deferred write over it. */
  row(): Readonly<StateRow> {
    if (this.merged !== null) return this.merged;
    this.stateRow ??= this.sql.exec<StateRow>('SELECT * FROM poller_state WHERE id = 1').one();
    const deferred = this.deferred;
    if (deferred === null) return this.stateRow;
    const row: StateRow = { ...this.stateRow, ...deferred.set };
    for (const [column, added] of Object.entries(deferred.add) as [CounterColumn, number][]) {
      row[column] += added;
    }
    this.merged = row;
    return row;
  }

  /**
   * Sets columns of the state row (and adds to its counters) in memory only: row() shows them
   * at once, the next write of this store writes them first, and flush() writes them now.
   * For what may be lost in a crash at no risk (see PollerStateStore): never a commit of
   * records, a dead letter or a failure.
   */
  defer(set: Partial<StateRow>, now: number, add: Partial<Record<CounterColumn, number>> = {}) {
    if (!this.life.live) return;
    this.deferred ??= { set: {}, add: {}, since: now, last: now };
    const deferred = this.deferred;
    deferred.last = Math.max(deferred.last, now);
    Object.assign(deferred.set, set);
    for (const [column, added] of Object.entries(add) as [CounterColumn, number][]) {
      deferred.add[column] = (deferred.add[column] ?? 0) + added;
    }
    this.merged = null;
  }

  /** Since when a deferred write waits (null: none). */
  deferredSince(): number | null {
    return this.deferred?.since ?? null;
  }

  /** What the deferred write sets, if anything waits (its columns' values). */
  deferredSet(): Readonly<Partial<StateRow>> | null {
    return this.deferred?.set ?? null;
  }

  /** Writes the deferred write now, with the write counters and `written_at`: one row. */
  flush(): void {
    const deferred = this.deferred;
    if (deferred === null) return;
    this.deferred = null; // before the write, which would flush it again
    const set = { ...deferred.set, written_at: deferred.last };
    const sets = Object.keys(set).map((column) => `${column} = ?`);
    const adds = Object.keys(deferred.add).map((column) => `${column} = ${column} + ?`);
    try {
      this.updateState(
        [...sets, ...adds].join(', '),
        'WHERE id = 1',
        ...Object.values(set),
        ...Object.values(deferred.add),
      );
    } catch (error) {
      this.deferred ??= deferred;
      throw error;
    }
  }

  /** The storage was changed outside this store (deleteAll): nothing read or deferred holds. */
  forget(): void {
    this.stateRow = null;
    this.merged = null;
    this.deferred = null;
  }

  /** The whole database's size in bytes, as the platform counts it. */
  databaseBytes(): number {
    return this.sql.databaseSize;
  }
}

function copyOf(deferred: DeferredWrite | null): DeferredWrite | null {
  return deferred && { ...deferred, set: { ...deferred.set }, add: { ...deferred.add } };
}
