// Owns the reconcile_state, reconcile_listing and reconcile_pending tables (reconcile).

import { isoTime } from '../../engine/iso-time.ts';
import type {
  DeliveryOp,
  FoundDeletes,
  ListedId,
  PendingChange,
  ReconcileState,
  ReconcileStore,
} from '../../engine/ports.ts';
import { NO_RECONCILIATION } from '../../engine/reconcile-rules.ts';
import type { ReconcileInput } from '../reconcile-view.ts';
import { StoredValueError } from './checked.ts';
import type { StoreHost } from './host.ts';

/**
 * Owns the reconciliation's tables (migration 15): `reconcile_state` (one row: where it is,
 * as JSON, and an admin's request and confirm beside it, so a run's write never overwrites
 * them), `reconcile_listing` (the ids of the listing going on, with the records of those to
 * upsert) and `reconcile_pending` (the deletes and upserts completed listings found, held,
 * awaiting the next listing's confirmation, or waiting to be delivered). The diff is SQL over `id_memory`: nothing of it is held in memory.
 * Every write a run makes is fenced (R6) through `fenced`.
 */
export class Reconciliation implements ReconcileStore {
  constructor(
    private readonly host: StoreHost,
    private readonly fenced: (epoch: number, write: () => unknown) => boolean,
  ) {}

  state(): ReconcileState {
    const row = this.row();
    if (row === undefined) return NO_RECONCILIATION;
    const state: unknown = JSON.parse(row.state);
    if (state === null || typeof state !== 'object' || !('listing' in state)) {
      throw new StoredValueError('reconcile_state.state', state);
    }
    return state as ReconcileState;
  }

  save(epoch: number, state: ReconcileState): boolean {
    return this.fenced(epoch, () => this.write(state));
  }

  requestedAt(): number | null {
    return this.row()?.requested_at ?? null;
  }

  confirmedAt(): number | null {
    return this.row()?.confirmed_at ?? null;
  }

  request(at: number): void {
    this.ensureRow();
    this.host.write('UPDATE reconcile_state SET requested_at = ? WHERE id = 1', at);
  }

  confirm(at: number): void {
    this.ensureRow();
    this.host.write('UPDATE reconcile_state SET confirmed_at = ? WHERE id = 1', at);
  }

  startListing(epoch: number, state: ReconcileState): boolean {
    return this.fenced(epoch, () => {
      this.host.write('DELETE FROM reconcile_listing');
      this.write(state);
      this.host.write('UPDATE reconcile_state SET requested_at = NULL WHERE id = 1');
    });
  }

  addPage(epoch: number, ids: readonly ListedId[], state: ReconcileState): boolean {
    return this.fenced(epoch, () => {
      for (const listed of ids) {
        this.host.write(
          `INSERT INTO reconcile_listing (id, version, version_ms, record) VALUES (?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET version = excluded.version,
             version_ms = excluded.version_ms, record = excluded.record`,
          listed.id,
          listed.version,
          listed.versionMs,
          listed.record === null ? null : JSON.stringify(listed.record),
        );
      }
      this.write(state);
    });
  }

  countDeletes(before: number): { deletes: number; alsoHeld: number; alsoAwaiting: number } {
    const row = this.host.sql
      .exec<{ deletes: number; held: number; awaiting: number }>(
        `SELECT COUNT(*) AS deletes,
           COALESCE(SUM(EXISTS (SELECT 1 FROM reconcile_pending p
             WHERE p.id = m.id AND p.op = 'delete' AND p.held = 1)), 0) AS held,
           COALESCE(SUM(EXISTS (SELECT 1 FROM reconcile_pending p
             WHERE p.id = m.id AND p.op = 'delete' AND p.awaiting = 1)), 0) AS awaiting
         FROM id_memory m
         WHERE ${GONE}`,
        before,
      )
      .one();
    return { deletes: row.deletes, alsoHeld: row.held, alsoAwaiting: row.awaiting };
  }

  heldCount(): number {
    return this.host.sql
      .exec<{ n: number }>('SELECT COUNT(*) AS n FROM reconcile_pending WHERE held = 1')
      .one().n;
  }

  knownIds(): number {
    return this.host.sql
      .exec<{ n: number }>('SELECT COUNT(*) AS n FROM id_memory WHERE deleted = 0')
      .one().n;
  }

  completeListing(epoch: number, found: FoundDeletes, state: ReconcileState): boolean {
    return this.fenced(epoch, () => {
      if (found.confirm) {
        this.host.write(
          `UPDATE reconcile_pending SET awaiting = 0
           WHERE awaiting = 1 AND id IN (SELECT m.id FROM id_memory m WHERE ${GONE})`,
          found.before,
        );
      }
      // Deletes waiting for this listing that it shows (or that it cannot confirm) are dropped.
      this.host.write('DELETE FROM reconcile_pending WHERE awaiting = 1');
      if (found.agree) {
        this.host.write(
          `UPDATE reconcile_pending SET held = 0
           WHERE held = 1 AND id IN (SELECT m.id FROM id_memory m WHERE ${GONE})`,
          found.before,
        );
      }
      // Held deletes this listing does not find again are dropped: it did not agree.
      this.host.write('DELETE FROM reconcile_pending WHERE held = 1');
      // A delete's version is its id's last delivered one; its text is made on the way out.
      this.host.write(
        `INSERT INTO reconcile_pending
           (id, op, version, version_ms, record, held, awaiting, found_at)
         SELECT m.id, 'delete', '', m.version_ms, NULL, ?, ?, ? FROM id_memory m WHERE ${GONE}
         ON CONFLICT (id, op) DO NOTHING`,
        found.hold ? 1 : 0,
        found.await ? 1 : 0,
        found.foundAt,
        found.before,
      );
      const upserts = this.host.write(
        `INSERT INTO reconcile_pending (id, op, version, version_ms, record, held, found_at)
         SELECT id, 'upsert', version, version_ms, record, 0, ? FROM reconcile_listing
         WHERE record IS NOT NULL
         ON CONFLICT (id, op) DO UPDATE SET version = excluded.version,
           version_ms = excluded.version_ms, record = excluded.record, found_at = excluded.found_at`,
        found.foundAt,
      );
      this.host.write('DELETE FROM reconcile_listing');
      const last = state.last === null ? null : { ...state.last, upserts };
      this.write({ ...state, last });
    });
  }

  releaseHeld(epoch: number, state: ReconcileState): boolean {
    return this.fenced(epoch, () => {
      this.host.write('UPDATE reconcile_pending SET held = 0 WHERE held = 1');
      this.write(state);
    });
  }

  pending(limit: number): PendingChange[] {
    return this.host.sql
      .exec<{
        id: string;
        op: string;
        version: string;
        version_ms: number;
        record: string | null;
        found_at: number;
      }>(
        `SELECT id, op, version, version_ms, record, found_at FROM reconcile_pending
         WHERE held = 0 AND awaiting = 0
         ORDER BY op DESC, id LIMIT ?`,
        limit,
      )
      .toArray()
      .map((row) => ({
        id: row.id,
        op: opOf(row.op),
        version: row.op === 'delete' ? isoTime(row.version_ms) : row.version,
        versionMs: row.version_ms,
        record: row.record === null ? null : JSON.parse(row.record),
        foundAt: row.found_at,
      }));
  }

  settle(epoch: number, done: readonly { id: string; op: DeliveryOp }[]): boolean {
    return this.fenced(epoch, () => {
      for (const change of done) {
        this.host.write(
          'DELETE FROM reconcile_pending WHERE id = ? AND op = ?',
          change.id,
          change.op,
        );
      }
    });
  }

  /** What status shows of it, for a poller whose reconcile lists `every` ms apart (null: full rounds). */
  input(every: number | null): ReconcileInput {
    return {
      every,
      state: this.state(),
      requestedAt: this.requestedAt(),
      ...this.counts(),
    };
  }

  /** Changes waiting to be delivered, and deletes waiting for the next listing: for status. */
  counts(): { pending: number; unconfirmed: number } {
    return this.host.sql
      .exec<{ pending: number; unconfirmed: number }>(
        `SELECT COALESCE(SUM(held = 0 AND awaiting = 0), 0) AS pending,
           COALESCE(SUM(awaiting = 1), 0) AS unconfirmed
         FROM reconcile_pending`,
      )
      .one();
  }

  private row():
    | { state: string; requested_at: number | null; confirmed_at: number | null }
    | undefined {
    return this.host.sql
      .exec<{ state: string; requested_at: number | null; confirmed_at: number | null }>(
        'SELECT state, requested_at, confirmed_at FROM reconcile_state WHERE id = 1',
      )
      .toArray()[0];
  }

  private ensureRow(): void {
    this.host.write(
      'INSERT OR IGNORE INTO reconcile_state (id, state) VALUES (1, ?)',
      JSON.stringify(NO_RECONCILIATION),
    );
  }

  private write(state: ReconcileState): void {
    this.host.write(
      `INSERT INTO reconcile_state (id, state) VALUES (1, ?)
       ON CONFLICT (id) DO UPDATE SET state = excluded.state`,
      JSON.stringify(state),
    );
  }
}

/**
 * An id of `id_memory m` a completed listing lacks: delivered, not deleted, delivered before
 * the listing began (minus lag_allowance: the `?`), and not in the listing.
 */
const GONE = `m.deleted = 0 AND m.seen_at < ?
  AND NOT EXISTS (SELECT 1 FROM reconcile_listing l WHERE l.id = m.id)`;

function opOf(text: string): DeliveryOp {
  if (text === 'delete' || text === 'upsert') return text;
  throw new StoredValueError('reconcile_pending.op', text);
}
