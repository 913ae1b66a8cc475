// Owns the deletions_stream and deletions_ledger tables (source.deletions).
import { type LedgerEntry, ledgerKey, type StreamStore } from '../../engine/ports.ts';
import type { StoreHost } from './host.ts';

/**
 * Owns `deletions_stream` (one row: the deletions stream's checkpoint) and
 * `deletions_ledger` (its deliveries the next window can ask for again, R9): the main
 * stream's checkpoint and ledger, for the stream of deletes beside it (migration 15). Every
 * write is fenced by the poller's lease (R6) through `fenced`.
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
         ON CONFLICT (id) DO UPDATE SET checkpoint = excluded.checkpoint`,
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
