import { deliveryOp } from './idempotency.ts';
import { ledgerKey, type RememberedId, type RunContext, type Update } from './ports.ts';
import { contentHash } from './unchanged.ts';

/**
 * The per-id memory (deliver.changes_only, reconcile): what was last delivered of each id.
 * Kept only when one of those is on: for the rest, a delivery writes no row more.
 */
export function keepsIds(ctx: RunContext): boolean {
  return (
    ctx.config.deliver.changes_only ||
    ctx.config.reconcile !== undefined ||
    ctx.config.source.resume !== undefined ||
    ctx.config.source.children !== undefined
  );
}

/** Whether the memory keeps content hashes: changes_only, or a listing compared by content. */
export function keepsHashes(ctx: RunContext): boolean {
  return (
    ctx.config.deliver.changes_only ||
    ctx.config.reconcile?.compare === 'content' ||
    ctx.config.source.resume !== undefined ||
    ctx.config.source.children !== undefined
  );
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
  // What a listing delivered is what the upstream has now, whatever its version says (a
  // record restored with an old updated_at, after its delete was remembered; a listing
  // without reconcile.updated_at gives none): it replaces what the id had, keeping the
  // version the memory had if that is newer, so the next listing does not send it again.
  const listing = ctx.stream === 'listing';
  const floors = listing ? (ctx.store.idsOf?.(handled.map((update) => update.id)) ?? null) : null;
  const entries: RememberedId[] = await Promise.all(
    handled.map(async (update) => {
      const deleted = deliveryOp(ctx, update) === 'delete';
      const known = hashes.get(ledgerKey(update.id, update.version));
      const hash =
        deleted || !hashing ? null : (known ?? (await contentHash(update.record, ignore)));
      const versionMs = Math.max(update.versionMs, floors?.get(update.id)?.versionMs ?? 0);
      return { id: update.id, versionMs, hash, deleted, seenAt: now };
    }),
  );
  return ctx.store.rememberIds(epoch, entries);
}

/** deliver.changes_ignore: the dot paths a content hash leaves out. */
export function ignoredPaths(ctx: RunContext): readonly string[] {
  return ctx.config.deliver.changes_ignore;
}
