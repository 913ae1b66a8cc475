import { type ChildrenEnd, childPrefix, type Listed } from './children.ts';
import type { FailingUpdate, RunContext, Update } from './ports.ts';
import type { HandledBatch } from './window-deliveries.ts';

/**
 * children.deletes: a parent's child listing is complete, so a child delivered under it
 * before and no longer listed is a delete, but only once confirmed: offset paging shifts
 * when a child goes away mid-listing and skips the one after it, so the parent's children
 * are listed again at once and what both listings lack is deleted. More than
 * children.max_deletes of the parent's known children are held (audited), not delivered.
 */

/**
 * How many of `known` children one listing may delete (children.max_deletes). A share allows
 * one at least: a parent's only child deleted (a comment on an issue with one) is the
 * common case, and the second listing has confirmed it.
 */
function allowedDeletes(max: { percent: number } | { count: number }, known: number): number {
  if ('count' in max) return max.count;
  return max.percent > 0 ? Math.max(1, Math.floor((known * max.percent) / 100)) : 0;
}

/**
 * Deletes what `first` and a second listing (`again`) both lack of the children known under
 * `parent`: each a delete of `<parent>/<child>` (its record null, versioned by the parent's
 * version), delivered through `deliver` like the children.
 */
export async function deleteUnlisted(
  ctx: RunContext,
  epoch: number,
  parent: Update,
  first: ReadonlySet<string>,
  again: () => Promise<Listed | Exclude<ChildrenEnd, { kind: 'done' }>>,
  deliver: (children: Update[]) => Promise<HandledBatch>,
  /** The window's failing updates: a child whose upsert is still failing is known as well. */
  failing: ReadonlyMap<string, FailingUpdate> = new Map(),
): Promise<ChildrenEnd> {
  const store = ctx.store.childProgress;
  const config = ctx.config.source.children;
  if (store === undefined || config === undefined) return { kind: 'done' };
  const known = knownChildren(store.known(childPrefix(parent.id)), parent.id, failing);
  const unlisted = known.filter((id) => !first.has(id));
  if (unlisted.length === 0) return { kind: 'done' };
  // Confirmed by a second listing, at once: what it lists is no delete (and was delivered).
  const second = await again();
  if (second.kind !== 'listed') return second;
  const { ids, missing } = second;
  if (missing) return { kind: 'done' };
  const gone = unlisted.filter((id) => !ids.has(id));
  if (gone.length === 0) return { kind: 'done' };
  if (gone.length > allowedDeletes(config.max_deletes, known.length)) {
    return store.hold(epoch, ctx.now(), parent.id, gone) ? { kind: 'done' } : { kind: 'fenced' };
  }
  const deletes: Update[] = gone.map((id) => ({
    id,
    version: parent.version,
    versionMs: parent.versionMs,
    record: null,
    parent: parent.id,
  }));
  const batch = await deliver(deletes);
  if (batch.kind !== 'handled') return batch;
  if (batch.stop !== undefined) return { kind: 'stopped', stop: batch.stop };
  return { kind: 'done' };
}

/**
 * The children known under `parent`: those the receiver holds (the per-id memory), and those
 * whose upsert is still failing (R19). A child that failed its first delivery and then went
 * away would otherwise get its upsert on a later retry and never its delete; now the delete
 * waits behind that upsert (engine/deliver-page.ts holds it) and follows it.
 */
function knownChildren(
  remembered: string[],
  parent: string,
  failing: ReadonlyMap<string, FailingUpdate>,
): string[] {
  const known = new Set(remembered);
  for (const failure of failing.values()) {
    if (failure.parent === parent && failure.record !== null) known.add(failure.id);
  }
  return known.size === remembered.length ? remembered : [...known].sort();
}

/** What the audit keeps of deletes held: the parent, how many, and the first few ids. */
export function heldDetail(parent: string, ids: readonly string[]): Record<string, unknown> {
  return { parent, count: ids.length, ids: ids.slice(0, 20) };
}
