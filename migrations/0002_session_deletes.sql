-- Deletes in the demo (source.deletions and reconcile): a deleted session stays in `sessions`
-- as a tombstone (deleted = 1, versioned by its delete), so that a late, older update cannot
-- bring it back; `upserted_at_ms` is when the handler last received an upsert of it (for
-- /demo/audit: a reconciliation deletes only ids last delivered before its listing began), and
-- `session_deletes` logs every delete received (/demo/audit's deletes_delivered).
ALTER TABLE sessions ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN upserted_at_ms INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS session_deletes (
  id TEXT NOT NULL,
  deleted_at_ms INTEGER NOT NULL,
  received_at_ms INTEGER NOT NULL,
  PRIMARY KEY (id, deleted_at_ms)
);
