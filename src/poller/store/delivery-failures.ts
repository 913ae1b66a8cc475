// Owns the delivery_failures table.
import type { FailingUpdate } from '../../engine/ports.ts';
import { recordToText } from '../record-text.ts';
import type { StoreHost } from './host.ts';

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
  parent: string | null;
};

/**
 * Owns the `delivery_failures` table (migration 3): updates that failed and are neither
 * delivered nor dead-lettered yet, with their attempts (R8). Their rows and bytes are counted
 * in the state row by triggers (migration 6). The port fences every write (R6).
 */
export class DeliveryFailures {
  constructor(private readonly host: StoreHost) {}

  /** Every failing update, by idempotency key. */
  all(): Map<string, FailingUpdate> {
    const rows = this.host.sql.exec<FailureRow>('SELECT * FROM delivery_failures').toArray();
    return new Map(rows.map((row) => [row.key, failingUpdateOf(row)]));
  }

  /** Every failing update's key, id, version and attempts, without its record (R19). */
  versions(): { key: string; id: string; versionMs: number; attempts: number }[] {
    return this.host.sql
      .exec<{ key: string; id: string; version_ms: number; attempts: number }>(
        'SELECT key, id, version_ms, attempts FROM delivery_failures ORDER BY version_ms, key',
      )
      .toArray()
      .map(({ key, id, version_ms, attempts }) => ({ key, id, versionMs: version_ms, attempts }));
  }

  /** Counts one more failed attempt at an update. */
  record(failure: FailingUpdate): void {
    this.host.write(
      `INSERT INTO delivery_failures (key, id, version, version_ms, record, attempts, first_failure, last_failure, last_error, parent)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET attempts = excluded.attempts, last_failure = excluded.last_failure,
         last_error = excluded.last_error`,
      failure.key,
      failure.id,
      failure.version,
      failure.versionMs,
      recordToText(failure.record),
      failure.attempts,
      failure.firstFailure,
      failure.lastFailure,
      failure.lastError,
      failure.parent ?? null,
    );
  }

  /** Forgets an update's failures (delivered, or dead-lettered). */
  clear(key: string): void {
    this.host.write('DELETE FROM delivery_failures WHERE key = ?', key);
  }

  /**
   * How many updates are failing and since when the oldest (its first failure), for status
   * and health (R19); null when none is.
   */
  retrying(): { count: number; oldestSince: number } | null {
    if (!this.any()) return null;
    const row = this.host.sql
      .exec<{ count: number; oldest: number | null }>(
        'SELECT COUNT(*) AS count, MIN(first_failure) AS oldest FROM delivery_failures',
      )
      .one();
    return row.oldest === null ? null : { count: row.count, oldestSince: row.oldest };
  }

  /** Whether any update is failing, as the triggers count them: no read of the table. */
  any(): boolean {
    return this.host.row().failure_rows > 0;
  }
}

function failingUpdateOf(row: FailureRow): FailingUpdate {
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
    ...(row.parent === null ? {} : { parent: row.parent }),
  };
}
