// Owns the content_memory table (deliver.changes_only).
import type { RememberedContent } from '../../engine/ports.ts';
import type { StoreHost } from './host.ts';

/** Ids asked for at once: well below SQLite's limit of bound parameters. */
const IDS_PER_QUERY = 100;

/**
 * Owns the `content_memory` table (migration 14): for a poller with `deliver.changes_only`,
 * each id's last delivered version and the hash of its content, so that a newer version with
 * the same content is not delivered again. One row per id, written only for a poller that has
 * the option on; the port fences every write (R6).
 */
export class ContentMemory {
  constructor(private readonly host: StoreHost) {}

  /** What was last delivered of these ids (those it knows). */
  of(ids: readonly string[]): Map<string, RememberedContent> {
    const known = new Map<string, RememberedContent>();
    for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
      const chunk = ids.slice(i, i + IDS_PER_QUERY);
      const rows = this.host.sql
        .exec<{ id: string; version_ms: number; content_hash: string }>(
          `SELECT id, version_ms, content_hash FROM content_memory WHERE id IN (${chunk.map(() => '?').join(', ')})`,
          ...chunk,
        )
        .toArray();
      for (const row of rows) {
        known.set(row.id, { id: row.id, versionMs: row.version_ms, hash: row.content_hash });
      }
    }
    return known;
  }

  /** Keeps what was delivered; an older version never replaces a newer one's. */
  remember(entries: readonly RememberedContent[]): void {
    for (const entry of entries) {
      this.host.write(
        `INSERT INTO content_memory (id, version_ms, content_hash) VALUES (?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET version_ms = excluded.version_ms, content_hash = excluded.content_hash
         WHERE excluded.version_ms >= content_memory.version_ms`,
        entry.id,
        entry.versionMs,
        entry.hash,
      );
    }
  }
}
