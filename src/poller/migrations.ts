/**
 * The poller's storage schema, as numbered, append-only migrations. Never edit a migration
 * that has shipped: add the next one.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: state (checkpoint, lease, next wakeup, counters) in one row, so a run's bookkeeping is
  // one row write; the ledger; run history.
  `CREATE TABLE poller_state (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     checkpoint INTEGER,
     epoch INTEGER NOT NULL DEFAULT 0,
     lease_trigger TEXT NOT NULL DEFAULT 'cron',
     lease_held INTEGER NOT NULL DEFAULT 0,
     lease_phase TEXT NOT NULL DEFAULT 'acquired',
     lease_started_at INTEGER,
     lease_expires_at INTEGER,
     wakeup_at INTEGER,
     wakeup_reason TEXT,
     wakeup_failure TEXT,
     failures INTEGER NOT NULL DEFAULT 0,
     runs INTEGER NOT NULL DEFAULT 0,
     successes INTEGER NOT NULL DEFAULT 0,
     failed_runs INTEGER NOT NULL DEFAULT 0,
     continued_runs INTEGER NOT NULL DEFAULT 0,
     skipped INTEGER NOT NULL DEFAULT 0,
     recoveries INTEGER NOT NULL DEFAULT 0,
     records_delivered INTEGER NOT NULL DEFAULT 0
   );
   INSERT INTO poller_state (id) VALUES (1);
   CREATE TABLE ledger (
     id TEXT NOT NULL,
     version TEXT NOT NULL,
     version_ms INTEGER NOT NULL,
     PRIMARY KEY (id, version)
   ) WITHOUT ROWID;
   CREATE INDEX ledger_by_version ON ledger (version_ms);
   CREATE TABLE runs (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     epoch INTEGER NOT NULL,
     trigger TEXT NOT NULL,
     outcome TEXT NOT NULL,
     started_at INTEGER NOT NULL,
     finished_at INTEGER NOT NULL,
     windows INTEGER NOT NULL,
     pages INTEGER NOT NULL,
     records INTEGER NOT NULL,
     error TEXT,
     checkpoint INTEGER
   );
   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  // 2: what the upstream told us: its clock skew (R11) and its rate-limit reset (R12); and
  // how far a window that could not finish got, so a window too big for any run is caught.
  `ALTER TABLE poller_state ADD COLUMN upstream_skew_ms INTEGER;
   ALTER TABLE poller_state ADD COLUMN rate_limited_until INTEGER;
   ALTER TABLE poller_state ADD COLUMN stall_from INTEGER;
   ALTER TABLE poller_state ADD COLUMN stall_pages INTEGER;`,
  // 3: delivery attempts of failing updates, dead letters (R8), and the admin audit log.
  `CREATE TABLE delivery_failures (
     key TEXT PRIMARY KEY,
     id TEXT NOT NULL,
     version TEXT NOT NULL,
     version_ms INTEGER NOT NULL,
     record TEXT NOT NULL,
     attempts INTEGER NOT NULL,
     first_failure INTEGER NOT NULL,
     last_failure INTEGER NOT NULL,
     last_error TEXT NOT NULL
   );
   CREATE INDEX delivery_failures_by_version ON delivery_failures (version_ms);
   CREATE TABLE dead_letters (
     key TEXT PRIMARY KEY,
     kind TEXT NOT NULL,
     id TEXT,
     version TEXT,
     version_ms INTEGER,
     record TEXT NOT NULL,
     error TEXT NOT NULL,
     attempts INTEGER NOT NULL,
     first_failure INTEGER NOT NULL,
     last_failure INTEGER NOT NULL
   );
   CREATE INDEX dead_letters_by_age ON dead_letters (first_failure, key);
   ALTER TABLE runs ADD COLUMN dead_lettered INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE audit_log (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     action TEXT NOT NULL,
     detail TEXT NOT NULL
   );`,
  // 4: an admin can pause a poller.
  `ALTER TABLE poller_state ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;`,
  // 5: how far below a window's start the upstream answers, learned (see PollerState).
  `ALTER TABLE poller_state ADD COLUMN straggle_ms INTEGER NOT NULL DEFAULT 0;`,
];

/** Applies the migrations not yet applied, each in its own transaction. */
export function migrate(storage: DurableObjectStorage): void {
  const sql = storage.sql;
  sql.exec(
    'CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const row = sql
    .exec<{ version: number | null }>('SELECT MAX(version) AS version FROM _migrations')
    .one();
  const applied = row.version ?? 0;
  MIGRATIONS.slice(applied).forEach((statement, index) => {
    const version = applied + index + 1;
    storage.transactionSync(() => {
      sql.exec(statement);
      sql.exec('INSERT INTO _migrations (version, applied_at) VALUES (?, ?)', version, Date.now());
    });
  });
}
