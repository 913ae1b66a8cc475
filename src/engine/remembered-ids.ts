import { deliveryOp } from './idempotency.ts';
import { ledgerKey, type RememberedId, type RunContext, type Update } from './ports.ts';

/**
 * The per-id memory (deliver.changes_only, reconcile): what was last delivered of each id.
 * Kept only when one of those is on: for the rest, a delivery writes no row more.
 */
export function keepsIds(ctx: RunContext): boolean {
  return ctx.config.deliver.changes_only || ctx.config.reconcile !== undefined;
}

/**
 * Remembers what a page handled of each id: the versions delivered, and those not sent
 * because their content had not changed (so a reconciliation does not send them either).
 * `hashes` (by ledger key) are their content hashes, when the poller keeps them. Fenced.
 */
export function rememberDelivered(
  ctx: RunContext,
  epoch: number,
  handled: readonly Update[],
  hashes: ReadonlyMap<string, string>,
): boolean {
  if (!keepsIds(ctx) || handled.length === 0 || ctx.store.rememberIds === undefined) return true;
  const now = ctx.now();
  const entries: RememberedId[] = handled.map((update) => ({
    id: update.id,
    versionMs: update.versionMs,
    hash: hashes.get(ledgerKey(update.id, update.version)) ?? null,
    deleted: deliveryOp(ctx, update) === 'delete',
    seenAt: now,
  }));
  return ctx.store.rememberIds(epoch, entries);
}
