// Owns the deletions_stream and deletions_ledger tables (source.deletions).
import { type LedgerEntry, ledgerKey, type Stall, type StreamStore } from '../../engine/ports.ts';
import type { StoreHost } from './host.ts';

/**
 * Owns `deletions_stream` (one row: the deletions stream's checkpoint, and its stall,
 * migration 20) and `deletions_ledger` (its deliveries the next window can ask for again,
 * R9): the main stream's checkpoint, stall and ledger, for the stream of deletes beside it
 * (migration 15). Every write is fenced by the poller's lease (R6) through `fenced`.
 */
export class DeletionsStream implements StreamStore {
  constructor(
    private readonly host: StoreHost,
    private readonly fenced: (epoch: number, write: () => unknown) => boolean,
  ) {}

  checkpoint(): number | null {
    const row = this.host.sql
      .exec<{ checkpoint: number | null }>('SELECT checkpoint FROM deletions_stream WHERE id = 1')
      .toArray()[0];
    return row?.checkpoint ?? null;
  }

  stall(): Stall | null {
    const row = this.host.sql
      .exec<{ stall_from: number | null; stall_pages: number | null }>(
        'SELECT stall_from, stall_pages FROM deletions_stream WHERE id = 1',
      )
      .toArray()[0];
    if (row === undefined || row.stall_from === null || row.stall_pages === null) return null;
    return { from: row.stall_from, pages: row.stall_pages };
  }

  keepStall(epoch: number, stall: Stall | null): boolean {
    const before = this.stall();
    // Most runs end with none, as before: no row written for that.
    if (before?.from === stall?.from && before?.pages === stall?.pages) {
      return this.fenced(epoch, () => {});
    }
    return this.fenced(epoch, () =>
      this.host.write(
        `INSERT INTO deletions_stream (id, stall_from, stall_pages) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET stall_from = excluded.stall_from,
           stall_pages = excluded.stall_pages`,
        stall?.from ?? null,
        stall?.pages ?? null,
      ),
    );
  }

  delivered(from: number): Set<string> {
    const keys = new Set<string>();
    for (const row of this.host.sql.exec<{ id: string; version: string }>(
      'SELECT id, version FROM deletions_ledger WHERE version_ms >= ?',
      from,
    )) {
      keys.add(ledgerKey(row.id, row.version));
    }
    return keys;
  }

  commitWindow(
    epoch: number,
    checkpoint: number,
    remember: LedgerEntry[],
    pruneBelow: number,
  ): boolean {
    return this.fenced(epoch, () => {
      this.host.write(
        `INSERT INTO deletions_stream (id, checkpoint) VALUES (1, ?)
         ON CONFLICT (id) DO UPDATE SET checkpoint = excluded.checkpoint,
           stall_from = NULL, stall_pages = NULL`,
        checkpoint,
      );
      this.insert(remember);
      this.host.write('DELETE FROM deletions_ledger WHERE version_ms < ?', pruneBelow);
    });
  }

  remember(epoch: number, entries: LedgerEntry[]): boolean {
    return this.fenced(epoch, () => this.insert(entries));
  }

  private insert(entries: LedgerEntry[]): void {
    for (const entry of entries) {
      this.host.write(
        'INSERT OR IGNORE INTO deletions_ledger (id, version, version_ms) VALUES (?, ?, ?)',
        entry.id,
        entry.version,
        entry.versionMs,
      );
    }
  }
}
