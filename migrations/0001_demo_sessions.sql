-- The demo handler's tables: the latest version of each session, and every version it has
-- ever received (so /demo/audit can prove that no update was lost).
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  updated_at TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS session_versions (
  id TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  received_at_ms INTEGER NOT NULL,
  PRIMARY KEY (id, updated_at_ms)
);
