// Owns the dead_letters table, its caps and its pruning.
import { formatDuration } from '../../config/duration.ts';
import { isoTime } from '../../engine/iso-time.ts';
import type { DeadLetter } from '../../engine/ports.ts';
import { recordToText } from '../record-text.ts';
import type { AuditEntry, AuditLog } from './audit-log.ts';
import { DEAD_LETTER_KINDS, known } from './checked.ts';
import type { StoreHost } from './host.ts';

/** Dead letters kept at most per poller; beyond it the oldest are pruned (audited). */
export const DEAD_LETTER_CAP = 10_000;

/** A prune for the cap goes down to this, so that it happens once per many dead letters. */
export const DEAD_LETTER_CAP_PRUNED_TO = 9_000;

/** The most dead letters one run's end prunes: a backlog is worked off over several runs. */
export const DEAD_LETTER_PRUNE_BATCH = 5_000;

/** Expired dead letters are pruned at most this often, so the audit log is not one per run. */
export const DEAD_LETTER_PRUNE_EVERY_MS = 3_600_000;

/** The config's default dead_letter_retention, for a store not told the poller's. */
const DEFAULT_RETENTION_MS = 14 * 86_400_000;

/**
 * A dead letter as stored: its record still as the JSON text it was kept as, so that reading
 * one never parses (or recurses through) a record too deep or too big to serve as JSON.
 */
export type StoredDeadLetter = Omit<DeadLetter, 'record'> & {
  recordText: string;
  /** The text's size in UTF-8 bytes. */
  recordBytes: number;
};

type DeadLetterRow = {
  key: string;
  kind: string;
  id: string | null;
  version: string | null;
  version_ms: number | null;
  record: string;
  record_bytes: number;
  error: string;
  attempts: number;
  first_failure: number;
  last_failure: number;
  parent: string | null;
};

/** The columns of a dead letter, with its record's size measured by SQLite. */
const COLUMNS = `key, kind, id, version, version_ms, record, octet_length(record) AS record_bytes,
  error, attempts, first_failure, last_failure, parent`;

/**
 * Owns the `dead_letters` table (R8: updates the poll loop will not deliver, kept, visible
 * and replayable), its bounds (dead_letter_retention and DEAD_LETTER_CAP) and its pruning,
 * with the prune's counters in the state row (`dead_letters_pruned`, `_pruned_at`). Its rows
 * and bytes are counted in the state row by triggers (migration 6).
 */
export class DeadLetters {
  /** How long dead letters are kept: the poller's dead_letter_retention, set by its object. */
  retention = DEFAULT_RETENTION_MS;

  constructor(
    private readonly host: StoreHost,
    private readonly audit: AuditLog,
  ) {}

  /** Keeps a dead letter; one already kept under its key stays as it is. */
  insert(letter: DeadLetter): void {
    this.host.write(
      `INSERT OR IGNORE INTO dead_letters
         (key, kind, id, version, version_ms, record, error, attempts, first_failure, last_failure, parent)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      letter.key,
      letter.kind,
      letter.id,
      letter.version,
      letter.versionMs,
      recordToText(letter.record),
      letter.error,
      letter.attempts,
      letter.firstFailure,
      letter.lastFailure,
      letter.parent ?? null,
    );
  }

  /**
   * Dead letters oldest first after the `after` key: `limit` of them, or fewer once their
   * records add up to `maxBytes` (always one at least), read one by one so that a page of big
   * records is never all in memory. `more` says whether any is left after the page.
   */
  page(
    limit: number,
    after?: { firstFailure: number; key: string },
    maxBytes = Number.POSITIVE_INFINITY,
  ): { letters: StoredDeadLetter[]; more: boolean } {
    const sql = this.host.sql;
    const rows = after
      ? sql.exec<DeadLetterRow>(
          `SELECT ${COLUMNS} FROM dead_letters WHERE (first_failure, key) > (?, ?)
           ORDER BY first_failure, key LIMIT ?`,
          after.firstFailure,
          after.key,
          limit + 1,
        )
      : sql.exec<DeadLetterRow>(
          `SELECT ${COLUMNS} FROM dead_letters ORDER BY first_failure, key LIMIT ?`,
          limit + 1,
        );
    const letters: StoredDeadLetter[] = [];
    let bytes = 0;
    for (const row of rows) {
      if (letters.length >= limit || (letters.length > 0 && bytes + row.record_bytes > maxBytes)) {
        return { letters, more: true };
      }
      letters.push(storedDeadLetterOf(row));
      bytes += row.record_bytes;
    }
    return { letters, more: false };
  }

  find(key: string): StoredDeadLetter | undefined {
    const row = this.host.sql
      .exec<DeadLetterRow>(`SELECT ${COLUMNS} FROM dead_letters WHERE key = ?`, key)
      .toArray()[0];
    return row ? storedDeadLetterOf(row) : undefined;
  }

  /** Removes a dead letter (replayed or discarded) and writes the audit line, together. */
  remove(key: string, audit: AuditEntry): boolean {
    return this.host.transaction(() => {
      const removed = this.host.write('DELETE FROM dead_letters WHERE key = ?', key) > 0;
      if (removed) this.audit.append(audit);
      return removed;
    });
  }

  /** Records one more failed attempt at replaying a dead letter. */
  recordReplayFailure(key: string, error: string, at: number): void {
    this.host.write(
      'UPDATE dead_letters SET error = ?, last_failure = ?, attempts = attempts + 1 WHERE key = ?',
      error,
      at,
      key,
    );
  }

  /**
   * How many dead letters there are (a maintained counter), and the first failure of the
   * oldest (one row of the age index): never a count over the table.
   */
  summary(): { count: number; oldest: number | null } {
    const oldest = this.host.sql
      .exec<{ first_failure: number }>(
        'SELECT first_failure FROM dead_letters ORDER BY first_failure, key LIMIT 1',
      )
      .toArray()[0];
    return { count: this.host.row().dead_letter_rows, oldest: oldest?.first_failure ?? null };
  }

  /**
   * Prunes the dead letters past the retention (counted from their first failure) or beyond
   * DEAD_LETTER_CAP, oldest first, at most DEAD_LETTER_PRUNE_BATCH at a time, and writes one
   * audit entry saying how many and which was the oldest. Expired ones are looked for at most
   * every DEAD_LETTER_PRUNE_EVERY_MS (unless the last prune left some behind); the cap is
   * checked every time and prunes down to DEAD_LETTER_CAP_PRUNED_TO. Returns how many went.
   */
  prune(now: number): number {
    const state = this.host.row();
    const excess =
      state.dead_letter_rows > DEAD_LETTER_CAP
        ? state.dead_letter_rows - DEAD_LETTER_CAP_PRUNED_TO
        : 0;
    const expiredDue =
      state.dead_letters_pruned_at === null ||
      now - state.dead_letters_pruned_at >= DEAD_LETTER_PRUNE_EVERY_MS;
    if (excess === 0 && !expiredDue) return 0;
    const oldest = this.oldest();
    const cutoff = now - this.retention;
    if (oldest === undefined || (excess === 0 && oldest.first_failure >= cutoff)) return 0;
    return this.host.transaction(() => {
      const byCap = this.host.returning(
        `DELETE FROM dead_letters WHERE key IN
           (SELECT key FROM dead_letters ORDER BY first_failure, key LIMIT ?) RETURNING key`,
        Math.min(excess, DEAD_LETTER_PRUNE_BATCH),
      ).length;
      const byAge = this.host.returning(
        `DELETE FROM dead_letters WHERE key IN
           (SELECT key FROM dead_letters WHERE first_failure < ? ORDER BY first_failure, key LIMIT ?)
         RETURNING key`,
        cutoff,
        DEAD_LETTER_PRUNE_BATCH - byCap,
      ).length;
      const pruned = byCap + byAge;
      // A batch cut short leaves the time alone, so that the next run's end goes on at once.
      const left = pruned >= DEAD_LETTER_PRUNE_BATCH;
      this.host.updateState(
        `dead_letters_pruned = dead_letters_pruned + ?,
           dead_letters_pruned_at = CASE WHEN ? THEN dead_letters_pruned_at ELSE ? END`,
        'WHERE id = 1',
        pruned,
        left ? 1 : 0,
        now,
      );
      this.audit.append({
        at: now,
        action: 'dead_letter.pruned',
        detail: {
          count: pruned,
          oldest_key: oldest.key,
          oldest_first_failure: isoTime(oldest.first_failure),
          past_retention: byAge,
          beyond_cap: byCap,
          retention: formatDuration(this.retention),
          cap: DEAD_LETTER_CAP,
          more_left: left,
        },
      });
      return pruned;
    });
  }

  /** The oldest dead letter's key and first failure: one row of the age index. */
  private oldest(): { key: string; first_failure: number } | undefined {
    return this.host.sql
      .exec<{ key: string; first_failure: number }>(
        'SELECT key, first_failure FROM dead_letters ORDER BY first_failure, key LIMIT 1',
      )
      .toArray()[0];
  }
}

function storedDeadLetterOf(row: DeadLetterRow): StoredDeadLetter {
  return {
    key: row.key,
    kind: known(DEAD_LETTER_KINDS, row.kind, 'dead_letters.kind'),
    id: row.id,
    version: row.version,
    versionMs: row.version_ms,
    recordText: row.record,
    recordBytes: row.record_bytes,
    error: row.error,
    attempts: row.attempts,
    firstFailure: row.first_failure,
    lastFailure: row.last_failure,
    ...(row.parent === null ? {} : { parent: row.parent }),
  };
}
