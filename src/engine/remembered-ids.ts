import { deliveryOp } from './idempotency.ts';
import { ledgerKey, type RememberedId, type RunContext, type Update } from './ports.ts';
import { contentHash } from './unchanged.ts';

/**
 * The per-id memory (deliver.changes_only, reconcile): what was last delivered of each id.
 * Kept only when one of those is on: for the rest, a delivery writes no row more.
 */
export function keepsIds(ctx: RunContext): boolean {
  return ctx.config.deliver.changes_only || ctx.config.reconcile !== undefined;
}

/** Whether the memory keeps content hashes: changes_only, or a listing compared by content. */
export function keepsHashes(ctx: RunContext): boolean {
  return ctx.config.deliver.changes_only || ctx.config.reconcile?.compare === 'content';
}

/**
 * Remembers what a page handled of each id: the versions delivered, and those not sent
 * because their content had not changed (so a reconciliation does not send them either).
 * `hashes` (by ledger key) are their content hashes, when the poller keeps them. Fenced.
 */
export async function rememberDelivered(
  ctx: RunContext,
  epoch: number,
  handled: readonly Update[],
  hashes: ReadonlyMap<string, string>,
): Promise<boolean> {
  if (!keepsIds(ctx) || handled.length === 0 || ctx.store.rememberIds === undefined) return true;
  const hashing = keepsHashes(ctx);
  const ignore = ignoredPaths(ctx);
  const now = ctx.now();
  // A listing without reconcile.updated_at gives no version: the id keeps the one it had.
  const unversioned = handled.filter((update) => update.version === '').map((update) => update.id);
  const before = unversioned.length > 0 ? (ctx.store.idsOf?.(unversioned) ?? null) : null;
  const entries: RememberedId[] = await Promise.all(
    handled.map(async (update) => {
      const deleted = deliveryOp(ctx, update) === 'delete';
      const known = hashes.get(ledgerKey(update.id, update.version));
      const hash =
        deleted || !hashing ? null : (known ?? (await contentHash(update.record, ignore)));
      const versionMs =
        update.version === '' ? (before?.get(update.id)?.versionMs ?? 0) : update.versionMs;
      return { id: update.id, versionMs, hash, deleted, seenAt: now };
    }),
  );
  return ctx.store.rememberIds(epoch, entries);
}

/** deliver.changes_ignore, as paths: what a content hash leaves out. */
export function ignoredPaths(ctx: RunContext): string[][] {
  return ctx.config.deliver.changes_ignore.map((path) => path.split('.'));
}
