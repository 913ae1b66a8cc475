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
  // 6: bounded by design. Each table's rows and approximate bytes are kept in poller_state,
  // so that status, health and metrics read one row instead of counting big tables: by
  // triggers for the tables written rarely (dead letters, failing updates, audit log), by the
  // store itself for the ledger, whose writes are the hot path. Counted once here for what is
  // already stored. Also: how many dead letters were pruned and when (retention, cap), and
  // when the object first saw its poller (a poller that never runs is noticed from there).
  `ALTER TABLE poller_state ADD COLUMN first_seen_at INTEGER;
   ALTER TABLE poller_state ADD COLUMN ledger_rows INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN ledger_bytes INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN failure_rows INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN failure_bytes INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN dead_letter_rows INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN dead_letter_bytes INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN audit_rows INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN audit_bytes INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN dead_letters_pruned INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN dead_letters_pruned_at INTEGER;
   UPDATE poller_state SET
     ledger_rows = (SELECT COUNT(*) FROM ledger),
     ledger_bytes = (SELECT COALESCE(SUM(octet_length(id) + octet_length(version) + 8), 0) FROM ledger),
     failure_rows = (SELECT COUNT(*) FROM delivery_failures),
     failure_bytes = (SELECT COALESCE(SUM(octet_length(key) + octet_length(record) + octet_length(last_error) + 64), 0) FROM delivery_failures),
     dead_letter_rows = (SELECT COUNT(*) FROM dead_letters),
     dead_letter_bytes = (SELECT COALESCE(SUM(octet_length(key) + octet_length(record) + octet_length(error) + 64), 0) FROM dead_letters),
     audit_rows = (SELECT COUNT(*) FROM audit_log),
     audit_bytes = (SELECT COALESCE(SUM(octet_length(action) + octet_length(detail) + 16), 0) FROM audit_log)
   WHERE id = 1;
   CREATE TRIGGER dead_letter_added AFTER INSERT ON dead_letters BEGIN
     UPDATE poller_state SET dead_letter_rows = dead_letter_rows + 1,
       dead_letter_bytes = dead_letter_bytes + octet_length(NEW.key) + octet_length(NEW.record) + octet_length(NEW.error) + 64
     WHERE id = 1;
   END;
   CREATE TRIGGER dead_letter_changed AFTER UPDATE ON dead_letters BEGIN
     UPDATE poller_state SET dead_letter_bytes = dead_letter_bytes
       + octet_length(NEW.key) + octet_length(NEW.record) + octet_length(NEW.error)
       - octet_length(OLD.key) - octet_length(OLD.record) - octet_length(OLD.error)
     WHERE id = 1;
   END;
   CREATE TRIGGER dead_letter_removed AFTER DELETE ON dead_letters BEGIN
     UPDATE poller_state SET dead_letter_rows = dead_letter_rows - 1,
       dead_letter_bytes = dead_letter_bytes - octet_length(OLD.key) - octet_length(OLD.record) - octet_length(OLD.error) - 64
     WHERE id = 1;
   END;
   CREATE TRIGGER failure_added AFTER INSERT ON delivery_failures BEGIN
     UPDATE poller_state SET failure_rows = failure_rows + 1,
       failure_bytes = failure_bytes + octet_length(NEW.key) + octet_length(NEW.record) + octet_length(NEW.last_error) + 64
     WHERE id = 1;
   END;
   CREATE TRIGGER failure_changed AFTER UPDATE ON delivery_failures BEGIN
     UPDATE poller_state SET failure_bytes = failure_bytes
       + octet_length(NEW.key) + octet_length(NEW.record) + octet_length(NEW.last_error)
       - octet_length(OLD.key) - octet_length(OLD.record) - octet_length(OLD.last_error)
     WHERE id = 1;
   END;
   CREATE TRIGGER failure_removed AFTER DELETE ON delivery_failures BEGIN
     UPDATE poller_state SET failure_rows = failure_rows - 1,
       failure_bytes = failure_bytes - octet_length(OLD.key) - octet_length(OLD.record) - octet_length(OLD.last_error) - 64
     WHERE id = 1;
   END;
   CREATE TRIGGER audit_added AFTER INSERT ON audit_log BEGIN
     UPDATE poller_state SET audit_rows = audit_rows + 1,
       audit_bytes = audit_bytes + octet_length(NEW.action) + octet_length(NEW.detail) + 16
     WHERE id = 1;
   END;
   CREATE TRIGGER audit_removed AFTER DELETE ON audit_log BEGIN
     UPDATE poller_state SET audit_rows = audit_rows - 1,
       audit_bytes = audit_bytes - octet_length(OLD.action) - octet_length(OLD.detail) - 16
     WHERE id = 1;
   END;`,
  // 7: idempotency keys percent-encode a `%` or `:` in the id (engine/idempotency.ts): a
  // failure stored under the old key of such an id takes its new one, or the engine would
  // never find it again, and the stale row would hold newer versions of its id back. In two
  // steps (char(1) first), so no new key meets an old one mid-update. Dead letters keep
  // their key: they are only ever addressed by the key they were stored under.
  `UPDATE delivery_failures
      SET key = char(1) || substr(key, 1, instr(key, ':'))
                || replace(replace(id, '%', '%25'), ':', '%3A') || ':' || version
    WHERE instr(id, ':') > 0 OR instr(id, '%') > 0;
   UPDATE delivery_failures SET key = substr(key, 2) WHERE substr(key, 1, 1) = char(1);`,
  // 8: where the poller's scope starts: its first checkpoint, or an earlier one an admin
  // backfilled from. Updates before it were never its to deliver (the demo's audit, status).
  `ALTER TABLE poller_state ADD COLUMN scope_from INTEGER;
   UPDATE poller_state SET scope_from = checkpoint;`,
  // 9: each poller schedules itself: its next own tick, from which its alarm is derived.
  `ALTER TABLE poller_state ADD COLUMN next_tick_at INTEGER;`,
  // 10: the poller's own secrets, each sealed with AES-GCM under a key derived from
  // SECRETS_KEY (src/secrets/crypto.ts); key_id says which key, so a rotation finds the rest.
  `CREATE TABLE poller_secrets (
     name TEXT PRIMARY KEY,
     ciphertext TEXT NOT NULL,
     iv TEXT NOT NULL,
     key_id TEXT NOT NULL,
     set_at INTEGER NOT NULL
   ) WITHOUT ROWID;`,
  // 11: freshness. Nudges (a pending flag the alarm is derived from, and counters), where the
  // last completed window ended (to measure how late records become visible), and that
  // lateness as histograms: one row per hour for the last 24 h, and one (slot -1) for all time.
  `CREATE TABLE freshness (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     nudge_pending INTEGER NOT NULL DEFAULT 0,
     nudge_since INTEGER,
     nudges_received INTEGER NOT NULL DEFAULT 0,
     nudges_coalesced INTEGER NOT NULL DEFAULT 0,
     nudges_acted_on INTEGER NOT NULL DEFAULT 0,
     nudges_ignored INTEGER NOT NULL DEFAULT 0,
     covered_to INTEGER,
     covered_at INTEGER,
     covered_checkpoint INTEGER,
     last_near_miss TEXT
   );
   INSERT INTO freshness (id) VALUES (1);
   CREATE TABLE lateness (
     slot INTEGER PRIMARY KEY,
     buckets TEXT NOT NULL,
     count INTEGER NOT NULL,
     sum_ms INTEGER NOT NULL,
     max_ms INTEGER NOT NULL,
     near_misses INTEGER NOT NULL
   );`,
  // 12: fewer rows written per run, and a count of them that survives restarts. The counters
  // (SQLite's rows, index rows included; alarm sets and deletes, each billed as a row) ride on
  // the state row's own writes. The ledger drops its version index (an insert wrote it too;
  // the ledger is small enough to scan), and its boundary (the few deliveries the next window
  // can ask for again) rides on the state row as well. The run history becomes a ring of 100
  // slots without AUTOINCREMENT: a run's line is one row written, where the insert, its
  // sequence row and the prune of the oldest line were three. An idle run (a success that
  // found nothing) waits in the state row, and goes into the ring only when a run that did
  // something follows it. What the poller last told the registry moves to the state row too.
  `ALTER TABLE poller_state ADD COLUMN rows_written INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN alarm_writes INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE poller_state ADD COLUMN ledger_boundary TEXT;
   ALTER TABLE poller_state ADD COLUMN idle_run TEXT;
   ALTER TABLE poller_state ADD COLUMN last_report TEXT;
   UPDATE poller_state SET last_report = (SELECT value FROM meta WHERE key = 'reported');
   DELETE FROM meta WHERE key = 'reported';
   DROP INDEX ledger_by_version;
   CREATE TABLE run_ring (
     slot INTEGER PRIMARY KEY,
     seq INTEGER NOT NULL,
     epoch INTEGER NOT NULL,
     trigger TEXT NOT NULL,
     outcome TEXT NOT NULL,
     started_at INTEGER NOT NULL,
     finished_at INTEGER NOT NULL,
     windows INTEGER NOT NULL,
     pages INTEGER NOT NULL,
     records INTEGER NOT NULL,
     dead_lettered INTEGER NOT NULL,
     error TEXT,
     checkpoint INTEGER
   );
   INSERT OR REPLACE INTO run_ring
     SELECT seq % 100, seq, epoch, trigger, outcome, started_at, finished_at, windows, pages,
       records, dead_lettered, error, checkpoint
     FROM runs ORDER BY seq;
   DROP TABLE runs;
   ALTER TABLE run_ring RENAME TO runs;`,
  // 13: every run has an id (its seq in the ring; the idle run waiting in the state row
  // carries its own), and a ring line for idle runs folded together says from which id.
  `ALTER TABLE runs ADD COLUMN first_seq INTEGER;
   UPDATE poller_state SET idle_run = json_set(idle_run, '$.id',
     (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs)) WHERE idle_run IS NOT NULL;`,
  // 14: deliver.changes_only: each id's last delivered version and its content's hash.
  `CREATE TABLE content_memory (
     id TEXT PRIMARY KEY,
     version_ms INTEGER NOT NULL,
     content_hash TEXT NOT NULL
   ) WITHOUT ROWID;`,
  // 15: deletes and reconciliation. The per-id memory also says whether the id's last
  // delivery was a delete and when it was delivered (content_memory, renamed, its hash now
  // optional); the deletions stream's checkpoint and ledger; a reconciliation's state, the
  // ids of its listing, and what it found to deliver.
  `CREATE TABLE id_memory (
     id TEXT PRIMARY KEY,
     version_ms INTEGER NOT NULL,
     content_hash TEXT,
     deleted INTEGER NOT NULL DEFAULT 0,
     seen_at INTEGER NOT NULL DEFAULT 0
   ) WITHOUT ROWID;
   INSERT INTO id_memory (id, version_ms, content_hash) SELECT id, version_ms, content_hash FROM content_memory;
   DROP TABLE content_memory;
   CREATE TABLE deletions_stream (id INTEGER PRIMARY KEY CHECK (id = 1), checkpoint INTEGER);
   CREATE TABLE deletions_ledger (
     id TEXT NOT NULL,
     version TEXT NOT NULL,
     version_ms INTEGER NOT NULL,
     PRIMARY KEY (id, version)
   ) WITHOUT ROWID;
   CREATE TABLE reconcile_state (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     state TEXT NOT NULL,
     requested_at INTEGER,
     confirmed_at INTEGER
   );
   CREATE TABLE reconcile_listing (
     id TEXT PRIMARY KEY,
     version TEXT NOT NULL,
     version_ms INTEGER NOT NULL,
     record TEXT
   ) WITHOUT ROWID;
   CREATE TABLE reconcile_pending (
     id TEXT NOT NULL,
     op TEXT NOT NULL,
     version TEXT NOT NULL,
     version_ms INTEGER NOT NULL,
     record TEXT,
     held INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (id, op)
   ) WITHOUT ROWID;`,
  // 16: when the listing that found a change began, apart from the change's version (a
  // delete is versioned by its id's last delivered version).
  `ALTER TABLE reconcile_pending ADD COLUMN found_at INTEGER NOT NULL DEFAULT 0;`,
  // 17: source.auth = oauth2: the tokens (sealed under SECRETS_KEY) and what status shows of
  // their renewals, never a token.
  `CREATE TABLE oauth_tokens (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     sealed TEXT,
     expires_at INTEGER,
     issued_at INTEGER,
     refresh_for TEXT,
     last_renewal_at INTEGER,
     renewals TEXT NOT NULL DEFAULT '[]',
     last_error TEXT,
     last_error_at INTEGER,
     refused_for TEXT
   );`,
  // 18: the deliveries of a window still going, a row per delivered page (Ledger.addPage):
  // the run after a crash skips them. No index: a handful of rows, pruned as C moves.
  `CREATE TABLE ledger_pages (
     seq INTEGER PRIMARY KEY,
     max_version_ms INTEGER NOT NULL,
     entries TEXT NOT NULL
   );`,
  // 19: up to when the state row holds the poller's runs (the last run it ended, or the last
  // of the idle runs written together): an idle run's end waits in memory until this is
  // IDLE_WRITE_EVERY_MS old, however often the object is evicted meanwhile.
  `ALTER TABLE poller_state ADD COLUMN written_at INTEGER;`,
  // 20: the deletions stream's own stall (a window of its own too big for one run), beside its
  // checkpoint: it was never told apart, and would have been written into the main stream's.
  `ALTER TABLE deletions_stream ADD COLUMN stall_from INTEGER;
   ALTER TABLE deletions_stream ADD COLUMN stall_pages INTEGER;`,
  // 21: a reconciliation's delete waiting for the next listing to confirm it (R16: a listing
  // paged by offset skips a record when one before it goes away). Deletes pending from before
  // stay as they were.
  `ALTER TABLE reconcile_pending ADD COLUMN awaiting INTEGER NOT NULL DEFAULT 0;`,
  // 22: the origins each of the poller's own secrets may be sent to (R18), a JSON array: those
  // of the config it was set under, or as given when it was set. NULL for a secret set before
  // this column: bound at the poller's next wiring, under its config then (poller/wiring.ts).
  `ALTER TABLE poller_secrets ADD COLUMN origins TEXT;`,
  // 23: source.resume (R20): the token the next round starts from, stored with the commit of
  // the round that handed it out, and the page cursor of the round in progress, kept as each
  // page is handled so that a budget stop or a crash continues from it.
  `CREATE TABLE resume_round (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     token TEXT,
     token_at INTEGER,
     cursor TEXT,
     pages INTEGER NOT NULL DEFAULT 0,
     resync_at INTEGER,
     resync_reason TEXT
   );`,
  // 24: source.children: the child listing in progress (its parent's ledger key and the next
  // child page), kept as each child page is handled so a budget stop or a crash continues
  // there; the parent of a child that is failing or dead-lettered (its envelope names it);
  // and the child requests of each run, for history and the cost model.
  `CREATE TABLE child_progress (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     parent TEXT NOT NULL,
     cursor TEXT NOT NULL,
     pages INTEGER NOT NULL
   );
   ALTER TABLE delivery_failures ADD COLUMN parent TEXT;
   ALTER TABLE dead_letters ADD COLUMN parent TEXT;
   ALTER TABLE runs ADD COLUMN child_requests INTEGER;`,
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
