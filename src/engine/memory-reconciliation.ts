import { isoTime } from './iso-time.ts';
import type { MemoryStore } from './memory-store.ts';
import type {
  DeliveryOp,
  ListedId,
  PendingChange,
  ReconcileState,
  ReconcileStore,
} from './ports.ts';
import { NO_RECONCILIATION } from './reconcile-rules.ts';

/** ReconcileStore in memory, with the SQLite one's contract: for engine tests and the simulation. */
export class MemoryReconciliation implements ReconcileStore {
  private current: ReconcileState = structuredClone(NO_RECONCILIATION);
  private requested: number | null = null;
  private confirmed: number | null = null;
  readonly listed = new Map<string, ListedId>();
  /** By `op` + id. */
  readonly changes = new Map<string, PendingChange & { held: boolean }>();

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

  countDeletes(before: number): { deletes: number; alsoHeld: number } {
    let deletes = 0;
    let alsoHeld = 0;
    for (const id of this.gone(before)) {
      deletes += 1;
      if (this.changes.get(`delete ${id}`)?.held) alsoHeld += 1;
    }
    return { deletes, alsoHeld };
  }

  heldCount(): number {
    return [...this.changes.values()].filter((change) => change.held).length;
  }

  knownIds(): number {
    return [...this.store.ids.values()].filter((entry) => !entry.deleted).length;
  }

  completeListing(
    epoch: number,
    found: { before: number; foundAt: number; hold: boolean; agree: boolean },
    state: ReconcileState,
  ): boolean {
    return this.fenced(epoch, () => {
      const gone = new Set(this.gone(found.before));
      for (const [key, change] of this.changes) {
        if (!change.held) continue;
        if (found.agree && change.op === 'delete' && gone.has(change.id)) change.held = false;
        else this.changes.delete(key);
      }
      for (const id of gone) {
        if (this.changes.has(`delete ${id}`)) continue;
        const versionMs = this.store.ids.get(id)?.versionMs ?? 0;
        const { hold, foundAt } = found;
        this.put({ id, op: 'delete', version: '', versionMs, record: null, held: hold, foundAt });
      }
      let upserts = 0;
      for (const listed of this.listed.values()) {
        if (listed.record === null) continue;
        this.put({ ...listed, op: 'upsert', held: false, foundAt: found.foundAt });
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
      .filter((change) => !change.held)
      .sort((a, b) => (a.op === b.op ? a.id.localeCompare(b.id) : a.op === 'upsert' ? -1 : 1))
      .slice(0, limit)
      .map(({ held: _, ...change }) =>
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

  private put(change: PendingChange & { held: boolean }): void {
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
