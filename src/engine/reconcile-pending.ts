import type { RunBudget } from './budget.ts';
import { deliveryKey } from './idempotency.ts';
import type { DeliveryOp, PendingChange, RunContext, Update } from './ports.ts';
import { goneById, recordOf } from './reconcile-fetch.ts';
import type { FetchById } from './reconcile-ports.ts';
import { overtaken } from './reconcile-rules.ts';

/** A page of pending changes, sorted for delivery (engine/reconcile.ts). */
export interface SortedPending {
  /** Needs no delivery any more: overtaken, not gone after all, or without a record. */
  skipped: { id: string; op: DeliveryOp; key: string }[];
  /** Deletes confirmed gone (R16). */
  deletes: Update[];
  /** Upserts, each with its record. */
  upserts: Update[];
}

/**
 * What each pending change of a page becomes: skipped, a delete confirmed gone, or an upsert
 * with its record (fetched by id with reconcile.fetch). `'budget'` or an error to retry stops
 * the page where it is: nothing of it is settled then. `contexts` are the ones each op is
 * delivered under (their delivery keys).
 */
export async function sortPending(
  ctx: RunContext,
  contexts: { upsert: RunContext; delete: RunContext },
  pending: PendingChange[],
  fetchById: FetchById | null,
  budget: RunBudget,
): Promise<SortedPending | 'budget' | { error: string }> {
  const known = ctx.store.idsOf?.(pending.map((change) => change.id)) ?? new Map();
  const sorted: SortedPending = { skipped: [], deletes: [], upserts: [] };
  for (const change of pending) {
    const last = known.get(change.id);
    const update = updateOf(change);
    const gctx = change.op === 'delete' ? contexts.delete : contexts.upsert;
    const skip = () =>
      sorted.skipped.push({ id: change.id, op: change.op, key: deliveryKey(gctx, update) });
    if (await overtaken(change, last, ctx)) {
      skip();
      continue;
    }
    if (change.op === 'delete') {
      const gone = await goneById(fetchById, change, ctx, budget);
      if (typeof gone !== 'boolean') return gone;
      if (gone) sorted.deletes.push(update);
      else skip();
      continue;
    }
    const record = await recordOf(fetchById, change, ctx, budget);
    if (record === 'budget' || 'error' in record) return record;
    if (record.value === null) skip();
    else sorted.upserts.push({ ...update, record: record.value });
  }
  return sorted;
}

/** The update a pending change goes out as: a delete names the listing that found it. */
function updateOf(change: PendingChange): Update {
  const update = {
    id: change.id,
    version: change.version,
    versionMs: change.versionMs,
    record: change.record,
  };
  return change.op === 'delete' ? { ...update, foundAt: change.foundAt } : update;
}
