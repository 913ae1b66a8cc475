// Owns the id_memory table (deliver.changes_only and reconcile).
import type { RememberedId } from '../../engine/ports.ts';
import type { StoreHost } from './host.ts';

/** Ids asked for at once: well below SQLite's limit of bound parameters. */
const IDS_PER_QUERY = 100;

/**
 * Owns the `id_memory` table (migration 15, from 14's content_memory): for a poller with
 * `deliver.changes_only` or `reconcile`, each id's last delivered version, the hash of its
 * content (changes_only), whether that was a delete, and when it was delivered. One row per
 * id, written only for a poller with one of those on; the port fences every write (R6).
 */
export class IdMemory {
  constructor(private readonly host: StoreHost) {}

  /** What was last delivered of these ids (those it knows). */
  of(ids: readonly string[]): Map<string, RememberedId> {
    const known = new Map<string, RememberedId>();
    for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
      const chunk = ids.slice(i, i + IDS_PER_QUERY);
      const rows = this.host.sql
        .exec<{
          id: string;
          version_ms: number;
          content_hash: string | null;
          deleted: number;
          seen_at: number;
        }>(
          `SELECT id, version_ms, content_hash, deleted, seen_at FROM id_memory WHERE id IN (${chunk.map(() => '?').join(', ')})`,
          ...chunk,
        )
        .toArray();
      for (const row of rows) {
        known.set(row.id, {
          id: row.id,
          versionMs: row.version_ms,
          hash: row.content_hash,
          deleted: row.deleted === 1,
          seenAt: row.seen_at,
        });
      }
    }
    return known;
  }

  /** Keeps what was delivered; an older version never replaces a newer one's. */
  remember(entries: readonly RememberedId[]): void {
    for (const entry of entries) {
      this.host.write(
        `INSERT INTO id_memory (id, version_ms, content_hash, deleted, seen_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET version_ms = excluded.version_ms,
           content_hash = excluded.content_hash, deleted = excluded.deleted, seen_at = excluded.seen_at
         WHERE excluded.version_ms >= id_memory.version_ms`,
        entry.id,
        entry.versionMs,
        entry.hash,
        entry.deleted ? 1 : 0,
        entry.seenAt,
      );
    }
  }

  /**
   * The ids known and not deleted that start with `prefix` (a parent's children, `<parent>/`):
   * a range of the primary key, not a scan.
   */
  under(prefix: string): string[] {
    // Every id with the prefix sorts at or after it, and before the prefix with its last
    // character one higher (`/` + 1 is `0`).
    const end = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
    return this.host.sql
      .exec<{ id: string }>(
        'SELECT id FROM id_memory WHERE id >= ? AND id < ? AND deleted = 0 ORDER BY id',
        prefix,
        end,
      )
      .toArray()
      .map((row) => row.id);
  }

  /** Ids known and not deleted: what a reconciliation's max_deletes is a share of. */
  live(): number {
    return this.host.sql
      .exec<{ n: number }>('SELECT COUNT(*) AS n FROM id_memory WHERE deleted = 0')
      .one().n;
  }
}
