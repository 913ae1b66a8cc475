import type { ListedId, RunContext, Update } from './ports.ts';
import { ignoredPaths } from './remembered-ids.ts';
import { contentHash } from './unchanged.ts';

/**
 * A listing page's ids (engine/reconcile.ts), with the records of those to upsert: never
 * delivered, or last delivered as a delete, or newer than delivered (reconcile.updated_at),
 * or, compared by content, different from what was delivered.
 */
export async function listedIds(ctx: RunContext, updates: Update[]): Promise<ListedId[]> {
  const known = ctx.store.idsOf?.(updates.map((update) => update.id)) ?? new Map();
  const versioned = ctx.config.reconcile?.updated_at !== undefined;
  const byContent = ctx.config.reconcile?.compare === 'content';
  const ignore = ignoredPaths(ctx);
  return Promise.all(
    updates.map(async (update) => {
      const last = known.get(update.id);
      // A tombstone the listing shows is a change only for an id delivered as live: it goes
      // out as the delete it is (deliveryOp), once.
      const tombstone = ctx.isDeleted?.(update.record) ?? false;
      let upsert = tombstone
        ? last !== undefined && !last.deleted
        : last === undefined || last.deleted || (versioned && update.versionMs > last.versionMs);
      if (!upsert && !tombstone && byContent && last?.hash) {
        upsert = (await contentHash(update.record, ignore)) !== last.hash;
      }
      return {
        id: update.id,
        version: update.version,
        versionMs: update.versionMs,
        record: upsert ? update.record : null,
      };
    }),
  );
}
