// Owns the child_progress table (source.children): the child listing in progress.
import { heldDetail } from '../../engine/child-deletes.ts';
import type { ChildProgress, ChildProgressStore } from '../../engine/children.ts';
import type { AuditLog } from './audit-log.ts';
import type { StoreHost } from './host.ts';
import type { IdMemory } from './id-memory.ts';

/**
 * Owns `child_progress` (migration 24, at most one row): the parent whose children are being
 * listed (its ledger key) and the next child page, kept as each child page is handled, so
 * that a budget stop or a crash continues at that page. Fenced through the port (R6).
 */
export class ChildProgressTable implements ChildProgressStore {
  constructor(
    private readonly host: StoreHost,
    private readonly fenced: (epoch: number, write: () => unknown) => boolean,
    /** The per-id memory (its owner): the children known under a parent. */
    private readonly ids: IdMemory,
    private readonly audit: AuditLog,
  ) {}

  known(prefix: string): string[] {
    return this.ids.under(prefix);
  }

  hold(epoch: number, at: number, parent: string, ids: readonly string[]): boolean {
    return this.fenced(epoch, () =>
      this.audit.append({ at, action: 'children_deletes_held', detail: heldDetail(parent, ids) }),
    );
  }

  read(): ChildProgress | null {
    const row = this.host.sql
      .exec<{ parent: string; cursor: string; pages: number }>(
        'SELECT parent, cursor, pages FROM child_progress WHERE id = 1',
      )
      .toArray()[0];
    return row === undefined ? null : { parent: row.parent, cursor: row.cursor, pages: row.pages };
  }

  keep(epoch: number, progress: ChildProgress | null): boolean {
    return this.fenced(epoch, () => {
      if (progress === null) {
        this.host.write('DELETE FROM child_progress WHERE id = 1');
        return;
      }
      this.host.write(
        `INSERT INTO child_progress (id, parent, cursor, pages) VALUES (1, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET parent = excluded.parent, cursor = excluded.cursor,
           pages = excluded.pages`,
        progress.parent,
        progress.cursor,
        progress.pages,
      );
    });
  }
}
