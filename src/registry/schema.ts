/**
 * The registry's storage: numbered, append-only migrations, like the poller's. One row per
 * poller (static or runtime) with what lists, the dashboard, metrics and the watchdog read,
 * so that none of them has to wake a poller; and the deletions, which outlive the pollers.
 */
export const REGISTRY_MIGRATIONS: readonly string[] = [
  `CREATE TABLE pollers (
     name TEXT PRIMARY KEY,
     kind TEXT NOT NULL,
     phase TEXT NOT NULL,
     config TEXT,
     version INTEGER NOT NULL DEFAULT 1,
     labels TEXT NOT NULL DEFAULT '{}',
     state TEXT,
     checkpoint INTEGER,
     dead_letters INTEGER NOT NULL DEFAULT 0,
     reported_at INTEGER,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   ) WITHOUT ROWID;
   CREATE INDEX pollers_in_phase ON pollers (phase, updated_at) WHERE phase != 'active';
   CREATE TABLE deletions (
     seq INTEGER PRIMARY KEY,
     name TEXT NOT NULL,
     at INTEGER NOT NULL,
     detail TEXT NOT NULL
   );
   CREATE TABLE registry_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`,
  // 2: whether /healthz counts the poller as at fault (its status has alerts).
  `ALTER TABLE pollers ADD COLUMN at_fault INTEGER NOT NULL DEFAULT 0;
   CREATE INDEX pollers_at_fault ON pollers (name) WHERE at_fault = 1;`,
  // 3: incarnations (R14): each create of a runtime poller's name gets a number never handed
  // out before, so a run or a config push of a deleted poller can be told from its successor
  // by the poller's object. Runtime pollers created before this migration get one each.
  `ALTER TABLE pollers ADD COLUMN incarnation INTEGER NOT NULL DEFAULT 0;
   UPDATE pollers SET incarnation = (
     SELECT COUNT(*) FROM pollers AS earlier
     WHERE earlier.kind = 'runtime' AND earlier.name <= pollers.name
   ) WHERE kind = 'runtime';
   INSERT INTO registry_meta (key, value)
     SELECT 'incarnations', CAST(COUNT(*) AS TEXT) FROM pollers WHERE kind = 'runtime';`,
  // 4: why a poller is at fault (its first alert, short), for /healthz to name runtime
  // pollers' reasons as it does static ones'; and the deletion trail pruned by age on insert.
  `ALTER TABLE pollers ADD COLUMN fault_reason TEXT;
   CREATE INDEX deletions_by_age ON deletions (at);`,
  // 5: when the registry should hear from each poller again (its reports say), so that the
  // watchdog visits the runtime pollers past it first (registry/overdue.ts): a lost alarm is
  // found in minutes, not in a round robin's cycle. Only the rows the watchdog asks about are
  // indexed.
  `ALTER TABLE pollers ADD COLUMN due_at INTEGER;
   CREATE INDEX pollers_overdue ON pollers (due_at)
     WHERE kind = 'runtime' AND phase = 'active' AND due_at IS NOT NULL;`,
];

export function migrateRegistry(storage: DurableObjectStorage): void {
  const sql = storage.sql;
  sql.exec(
    'CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const applied =
    sql.exec<{ version: number | null }>('SELECT MAX(version) AS version FROM _migrations').one()
      .version ?? 0;
  REGISTRY_MIGRATIONS.slice(applied).forEach((statement, index) => {
    storage.transactionSync(() => {
      sql.exec(statement);
      sql.exec(
        'INSERT INTO _migrations (version, applied_at) VALUES (?, ?)',
        applied + index + 1,
        Date.now(),
      );
    });
  });
}
