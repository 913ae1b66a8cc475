import { isoTime } from './iso-time.ts';
import type { MemoryStore } from './memory-store.ts';
import type {
  DeliveryOp,
  FoundDeletes,
  ListedId,
  PendingChange,
  ReconcileState,
  ReconcileStore,
} from './ports.ts';
import { NO_RECONCILIATION } from './reconcile-rules.ts';

/** A pending change, held (max_deletes) or awaiting a second listing, or neither: to deliver. */
type Change = PendingChange & { held: boolean; awaiting: boolean };

/** ReconcileStore in memory, with the SQLite one's contract: for engine tests and the simulation. */
export class MemoryReconciliation implements ReconcileStore {
  private current: ReconcileState = structuredClone(NO_RECONCILIATION);
  private requested: number | null = null;
  private confirmed: number | null = null;
  readonly listed = new Map<string, ListedId>();
  /** By `op` + id. */
  readonly changes = new Map<string, Change>();

  constructor(private readonly store: MemoryStore) {}

  state(): ReconcileState {
    return structuredClone(this.current);
  }

  save(epoch: number, state: ReconcileState): boolean {
    return this.fenced(epoch, () => {
      this.current = structuredClone(state);
    });
  }

  requestedAt(): number | null {
    return this.requested;
  }

  confirmedAt(): number | null {
    return this.confirmed;
  }

  request(at: number): void {
    this.requested = at;
  }

  confirm(at: number): void {
    this.confirmed = at;
  }

  startListing(epoch: number, state: ReconcileState): boolean {
    return this.fenced(epoch, () => {
      this.listed.clear();
      this.current = structuredClone(state);
      this.requested = null;
    });
  }

  addPage(epoch: number, ids: readonly ListedId[], state: ReconcileState): boolean {
    return this.fenced(epoch, () => {
      for (const listed of ids) this.listed.set(listed.id, structuredClone(listed));
      this.store.rowsWritten += ids.length;
      this.current = structuredClone(state);
    });
  }

  countDeletes(before: number): { deletes: number; alsoHeld: number; alsoAwaiting: number } {
    let deletes = 0;
    let alsoHeld = 0;
    let alsoAwaiting = 0;
    for (const id of this.gone(before)) {
      deletes += 1;
      const change = this.changes.get(`delete ${id}`);
      if (change?.held) alsoHeld += 1;
      if (change?.awaiting) alsoAwaiting += 1;
    }
    return { deletes, alsoHeld, alsoAwaiting };
  }

  heldCount(): number {
    return [...this.changes.values()].filter((change) => change.held).length;
  }

  knownIds(): number {
    return [...this.store.ids.values()].filter((entry) => !entry.deleted).length;
  }

  completeListing(epoch: number, found: FoundDeletes, state: ReconcileState): boolean {
    return this.fenced(epoch, () => {
      const gone = new Set(this.gone(found.before));
      for (const [key, change] of this.changes) {
        if (change.awaiting) {
          if (found.confirm && gone.has(change.id)) change.awaiting = false;
          else this.changes.delete(key);
        } else if (change.held) {
          if (found.agree && gone.has(change.id)) change.held = false;
          else this.changes.delete(key);
        }
      }
      for (const id of gone) {
        if (this.changes.has(`delete ${id}`)) continue;
        const versionMs = this.store.ids.get(id)?.versionMs ?? 0;
        this.put({
          id,
          op: 'delete',
          version: '',
          versionMs,
          record: null,
          held: found.hold,
          awaiting: found.await,
          foundAt: found.foundAt,
        });
      }
      let upserts = 0;
      for (const listed of this.listed.values()) {
        if (listed.record === null) continue;
        this.put({
          ...listed,
          op: 'upsert',
          held: false,
          awaiting: false,
          foundAt: found.foundAt,
        });
        upserts += 1;
      }
      this.listed.clear();
      this.current = structuredClone({
        ...state,
        last: state.last === null ? null : { ...state.last, upserts },
      });
    });
  }

  releaseHeld(epoch: number, state: ReconcileState): boolean {
    return this.fenced(epoch, () => {
      for (const change of this.changes.values()) change.held = false;
      this.current = structuredClone(state);
    });
  }

  pending(limit: number): PendingChange[] {
    return [...this.changes.values()]
      .filter((change) => !change.held && !change.awaiting)
      .sort((a, b) => (a.op === b.op ? a.id.localeCompare(b.id) : a.op === 'upsert' ? -1 : 1))
      .slice(0, limit)
      .map(({ held: _, awaiting: __, ...change }) =>
        structuredClone({
          ...change,
          version: change.op === 'delete' ? isoTime(change.versionMs) : change.version,
        }),
      );
  }

  settle(epoch: number, done: readonly { id: string; op: DeliveryOp }[]): boolean {
    return this.fenced(epoch, () => {
      for (const change of done) this.changes.delete(`${change.op} ${change.id}`);
    });
  }

  private *gone(before: number): Iterable<string> {
    for (const entry of this.store.ids.values()) {
      if (!entry.deleted && entry.seenAt < before && !this.listed.has(entry.id)) yield entry.id;
    }
  }

  private put(change: Change): void {
    this.changes.set(`${change.op} ${change.id}`, change);
    this.store.rowsWritten += 1;
  }

  private fenced(epoch: number, write: () => void): boolean {
    if (!this.store.holds(epoch)) return false;
    write();
    this.store.rowsWritten += 1;
    return true;
  }
}
