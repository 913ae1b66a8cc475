// Owns the audit_log table.
import type { Json } from '../../engine/ports.ts';
import type { StoreHost } from './host.ts';

/** Audit entries kept: the newest, the older ones pruned as each new one is written. */
export const AUDIT_LIMIT = 1_000;

/** One line of the audit log: an admin action (or a prune) and what it was about. */
export interface AuditEntry {
  at: number;
  action: string;
  detail: Json;
}

/**
 * Owns the `audit_log` table (migration 3): what admins did to the poller, and what the store
 * pruned on its own. Its rows and bytes are counted in the state row by triggers (migration 6).
 */
export class AuditLog {
  constructor(private readonly host: StoreHost) {}

  /** Writes an audit entry, and drops the ones beyond the newest AUDIT_LIMIT (by key range). */
  append(entry: AuditEntry): void {
    const [added] = this.host.returning<{ seq: number }>(
      'INSERT INTO audit_log (at, action, detail) VALUES (?, ?, ?) RETURNING seq',
      entry.at,
      entry.action,
      JSON.stringify(entry.detail),
    );
    if (added) this.host.write('DELETE FROM audit_log WHERE seq <= ?', added.seq - AUDIT_LIMIT);
  }

  /** The newest entries first. */
  list(limit: number): AuditEntry[] {
    return this.host.sql
      .exec<{ at: number; action: string; detail: string }>(
        'SELECT at, action, detail FROM audit_log ORDER BY seq DESC LIMIT ?',
        limit,
      )
      .toArray()
      .map((row) => ({ at: row.at, action: row.action, detail: parseDetail(row.detail) }));
  }
}

/** A detail as written: any JSON value (JSON.stringify of a Json). */
function parseDetail(text: string): Json {
  const detail: Json = JSON.parse(text);
  return detail;
}
