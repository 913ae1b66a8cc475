// Owns the ledger and ledger_pages tables, and the ledger's boundary and size in poller_state.
import { type LedgerEntry, ledgerKey } from '../../engine/ports.ts';
import { numberAt, StoredValueError, stringAt } from './checked.ts';
import type { StoreHost } from './host.ts';

/**
 * The largest boundary kept in the state row, as JSON. A window's boundary is usually a few
 * deliveries (those stamped in the second below the next window's start): written with the
 * checkpoint, it costs no row of its own. A larger one goes to the ledger table.
 */
export const BOUNDARY_MAX_CHARS = 8_192;

/** A ledger row's approximate size, as SQL over its columns (see migration 6). */
const LEDGER_ROW_BYTES = 'octet_length(id) + octet_length(version) + 8';

/** What a commit sets in the state row of the ledger; bound by LedgerCommit's values. */
export const LEDGER_COMMIT_SET = `ledger_rows = ledger_rows + ?, ledger_bytes = ledger_bytes + ?,
  ledger_boundary = ?`;

/** What an emptied ledger sets in the state row. */
export const LEDGER_CLEARED = 'ledger_rows = 0, ledger_bytes = 0, ledger_boundary = NULL';

/** The ledger's side of a commit, for the state row. */
export interface LedgerCommit {
  /** The boundary kept in the state row (JSON), or null when there is none or it is in the table. */
  boundary: string | null;
  /** Rows and bytes the ledger table gained (or lost). */
  rows: number;
  bytes: number;
}

/** The bindings of LEDGER_COMMIT_SET. */
export function ledgerBindings(ledger: LedgerCommit): unknown[] {
  return [ledger.rows, ledger.bytes, ledger.boundary];
}

/**
 * Owns the `ledger` table (R9: the deliveries the next window can ask for again) and the
 * ledger's part of the state row: its boundary (`poller_state.ledger_boundary`, while small)
 * and its kept size (`ledger_rows`, `ledger_bytes`, counted here: the ledger's writes are the
 * hot path, with no trigger).
 */
export class Ledger {
  constructor(private readonly host: StoreHost) {}

  /** Keys (`id` + `version`) of deliveries remembered at or above `from`. */
  delivered(from: number): Set<string> {
    const keys = new Set<string>();
    for (const row of this.host.sql.exec<{ id: string; version: string }>(
      'SELECT id, version FROM ledger WHERE version_ms >= ?',
      from,
    )) {
      keys.add(ledgerKey(row.id, row.version));
    }
    for (const entry of this.boundary()) {
      if (entry.versionMs >= from) keys.add(ledgerKey(entry.id, entry.version));
    }
    for (const row of this.host.sql.exec<{ entries: string }>(
      'SELECT entries FROM ledger_pages WHERE max_version_ms >= ?',
      from,
    )) {
      for (const entry of decodeEntries(row.entries, 'ledger_pages.entries')) {
        if (entry.versionMs >= from) keys.add(ledgerKey(entry.id, entry.version));
      }
    }
    return keys;
  }

  /**
   * A page a window still going has delivered, in one row of `ledger_pages`: the run after
   * a crash skips it, so a crash redelivers only the page in flight. A window's commit keeps
   * what the next window needs as ever (remember), and prunes the batches below its
   * `pruneBelow` (commit). Not counted in the ledger's size: a few rows, gone as C moves.
   */
  addPage(entries: LedgerEntry[]): void {
    if (entries.length === 0) return;
    let max = Number.NEGATIVE_INFINITY;
    for (const entry of entries) if (entry.versionMs > max) max = entry.versionMs;
    this.host.writeElsewhere(
      'INSERT INTO ledger_pages (max_version_ms, entries) VALUES (?, ?)',
      max,
      encodeEntries(entries),
    );
  }

  /**
   * The ledger's part of a commit: the new boundary (kept in the state row while it is small,
   * in the ledger table otherwise) and the rows below `pruneBelow` pruned. Returns what the
   * state row must say of the ledger (LEDGER_COMMIT_SET).
   */
  commit(remember: LedgerEntry[], pruneBelow: number): LedgerCommit {
    const state = this.host.row();
    const kept = decodeBoundary(state.ledger_boundary).filter(
      (entry) => entry.versionMs >= pruneBelow,
    );
    const entries = mergeEntries(kept, remember);
    let boundary = encodeBoundary(entries);
    let added = { rows: 0, bytes: 0 };
    if (boundary === undefined) {
      // Too big for the state row (a long overlap at a high rate): in the table, as rows.
      added = this.insert(entries);
      boundary = null;
    }
    let droppedRows = 0;
    let droppedBytes = 0;
    if (state.ledger_rows + added.rows > 0) {
      for (const row of this.host.returning<{ bytes: number }>(
        `DELETE FROM ledger WHERE version_ms < ? RETURNING ${LEDGER_ROW_BYTES} AS bytes`,
        pruneBelow,
      )) {
        droppedRows += 1;
        droppedBytes += row.bytes;
      }
    }
    this.host.write('DELETE FROM ledger_pages WHERE max_version_ms < ?', pruneBelow);
    return { boundary, rows: added.rows - droppedRows, bytes: added.bytes - droppedBytes };
  }

  /** Inserts ledger entries and counts them in the ledger's size. */
  add(entries: LedgerEntry[]): void {
    const added = this.insert(entries);
    if (added.rows === 0) return;
    this.host.updateState(
      'ledger_rows = ledger_rows + ?, ledger_bytes = ledger_bytes + ?',
      'WHERE id = 1',
      added.rows,
      added.bytes,
    );
  }

  /** Empties the table; the state row's part is LEDGER_CLEARED, in the caller's write. */
  clear(): void {
    this.host.write('DELETE FROM ledger');
    this.host.write('DELETE FROM ledger_pages');
  }

  /** Ledger entries: the table's rows and the boundary kept in the state row. */
  size(): number {
    const rows = this.host.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM ledger').one().n;
    return rows + this.boundary().length;
  }

  /** The boundary, as kept in the state row. */
  private boundary(): LedgerEntry[] {
    return decodeBoundary(this.host.row().ledger_boundary);
  }

  /** Inserts ledger entries not there yet; says how many rows and bytes that added. */
  private insert(entries: LedgerEntry[]): { rows: number; bytes: number } {
    let rows = 0;
    let bytes = 0;
    for (const entry of entries) {
      for (const row of this.host.returning<{ bytes: number }>(
        `INSERT OR IGNORE INTO ledger (id, version, version_ms) VALUES (?, ?, ?) RETURNING ${LEDGER_ROW_BYTES} AS bytes`,
        entry.id,
        entry.version,
        entry.versionMs,
      )) {
        rows += 1;
        bytes += row.bytes;
      }
    }
    return { rows, bytes };
  }
}

/** Ledger entries as `[id, version, versionMs]` triples, in JSON. */
function encodeEntries(entries: LedgerEntry[]): string {
  return JSON.stringify(entries.map((entry) => [entry.id, entry.version, entry.versionMs]));
}

function encodeBoundary(entries: LedgerEntry[]): string | null | undefined {
  if (entries.length === 0) return null;
  const text = encodeEntries(entries);
  return text.length <= BOUNDARY_MAX_CHARS ? text : undefined;
}

/** The boundary as encodeBoundary wrote it, checked. */
function decodeBoundary(text: string | null): LedgerEntry[] {
  return text === null ? [] : decodeEntries(text, 'poller_state.ledger_boundary');
}

/** Entries as encodeEntries wrote them into `column`: `[id, version, versionMs]` triples, checked. */
function decodeEntries(text: string, column: string): LedgerEntry[] {
  const entries: unknown = JSON.parse(text);
  if (!Array.isArray(entries)) throw new StoredValueError(column, entries);
  return entries.map((entry: unknown) => {
    if (!Array.isArray(entry) || entry.length !== 3) throw new StoredValueError(column, entry);
    const [id, version, versionMs]: unknown[] = entry;
    return {
      id: stringAt(id, column),
      version: stringAt(version, column),
      versionMs: numberAt(versionMs, column),
    };
  });
}

/** Entries of both lists, each `(id, version)` once. */
function mergeEntries(kept: LedgerEntry[], added: LedgerEntry[]): LedgerEntry[] {
  if (kept.length === 0) return added;
  const seen = new Set(kept.map((entry) => ledgerKey(entry.id, entry.version)));
  return [...kept, ...added.filter((entry) => !seen.has(ledgerKey(entry.id, entry.version)))];
}
