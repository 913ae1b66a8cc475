import { deleteUnlisted } from './child-deletes.ts';
import { deadLetterUnreadable } from './dead-letter-unreadable.ts';
import { type Continuation, type Paging, pages, type StreamEnd } from './page-stream.ts';
import {
  type FailingUpdate,
  ledgerKey,
  type RunContext,
  type Source,
  type Update,
} from './ports.ts';
import type { Window } from './window.ts';
import type { HandledBatch } from './window-deliveries.ts';

/**
 * source.children: requests per parent record. After each page of the stream, each new
 * parent's children are listed (every page of them, `{parent.…}` filled from the parent)
 * and delivered as records of their own, before the parent counts as handled: a window
 * commits only when every child page of every parent in it was handled (R1).
 */

/** The children's endpoint, as a source (sources/derived-sources.ts childrenSource). */
export interface ChildrenPort {
  source: Source;
}

/** The child listing in progress: its parent (ledger key) and the next page to ask for. */
export interface ChildProgress {
  parent: string;
  cursor: string;
  pages: number;
}

/** Where the child listing in progress stands (one owner, fenced like C, R6). */
export interface ChildProgressStore {
  read(): ChildProgress | null;
  /** Keeps the next child page once one was handled; null: the listing ended. */
  keep(epoch: number, progress: ChildProgress | null): boolean;
  /** children.deletes: the ids delivered under this id prefix (`<parent>/`) and not deleted. */
  known(prefix: string): string[];
  /** children.max_deletes: deletes a listing found and did not deliver, audited (fenced). */
  hold(epoch: number, at: number, parent: string, ids: readonly string[]): boolean;
}

/** The run's count of child requests (status, the cost model). */
export interface ChildTally {
  childRequests: number;
  deadLettered: number;
}

/** How one parent's children went: all handled, or why the window stops in them. */
export type ChildrenEnd = { kind: 'done' } | StreamEnd | { kind: 'misconfigured'; error: string };

/**
 * A child's id: `<parent id>/<child id>`, with `%` and `/` in the parent's id
 * percent-encoded, so that no two children of two parents share one.
 */
export function childId(parentId: string, id: string): string {
  return childPrefix(parentId) + id;
}

/** What every child id of `parentId` starts with: its id, `%` and `/` encoded, and a `/`. */
export function childPrefix(parentId: string): string {
  return `${parentId.replaceAll('%', '%25').replaceAll('/', '%2F')}/`;
}

/**
 * A child as it is delivered: its id under its parent's, the parent's id in its envelope, and
 * its version its own updated_at or, without one (read as ids only), the parent's.
 */
export function childOf(parent: Update, child: Update): Update {
  const own = child.version !== '';
  return {
    id: childId(parent.id, child.id),
    version: own ? child.version : parent.version,
    versionMs: own ? child.versionMs : parent.versionMs,
    record: child.record,
    parent: parent.id,
  };
}

/**
 * Lists and delivers one parent's children, page by page, from the page a run before kept
 * (a budget stop or a crash continues there: no handled child page is asked for again, none
 * is skipped). `deliver` handles each page's children as a batch of the window's. With
 * children.deletes, a listing seen whole by this run is compared with the children known
 * under the parent (engine/child-deletes.ts).
 */
export async function deliverChildren(
  of: ParentListing,
  /** The window's failing updates (R19): a child failing under the parent is known too. */
  failing: ReadonlyMap<string, FailingUpdate> = new Map(),
): Promise<ChildrenEnd> {
  const { ctx, epoch, parent, deliver } = of;
  const port = ctx.children;
  if (port === undefined || port === null) return { kind: 'done' };
  const store = ctx.store.childProgress;
  const key = ledgerKey(parent.id, parent.version);
  const kept = store?.read() ?? null;
  const from = kept?.parent === key ? kept : null;
  let written = from !== null;
  const continued: Continuation = {
    cursor: from?.cursor ?? null,
    pages: from?.pages ?? 0,
    keep(cursor, pages) {
      written = true;
      return store === undefined || store.keep(epoch, { parent: key, cursor, pages });
    },
  };
  const listing = await listChildren(of, continued);
  if (listing.kind !== 'listed') return listing;
  // The listing ended: a run after it lists this parent's children from their first page.
  if (written && store !== undefined && !store.keep(epoch, null)) return { kind: 'fenced' };
  if (!ctx.config.source.children?.deletes || listing.missing) return { kind: 'done' };
  const again = () => listChildren(of);
  // Only a listing this run saw from its first page is whole. One continued from a kept page
  // (after a budget stop or a crash) is listed again whole: the parent may never change
  // again, and a child it stopped listing would stay at the receiver.
  const whole = from === null ? listing : await again();
  if (whole.kind !== 'listed') return whole;
  if (whole.missing) return { kind: 'done' };
  return deleteUnlisted(ctx, epoch, parent, whole.ids, again, deliver, failing);
}

/** The page stream's parts a child listing shares with its parent window's. */
export type ChildPaging = Omit<Paging, 'source' | 'round' | 'continued'>;

/** One parent's children as its window lists them: where, with what, delivered how. */
export interface ParentListing {
  ctx: RunContext;
  epoch: number;
  /** The parent's window: its bounds are the children's {from} and {to}. */
  window: Window;
  parent: Update;
  paging: ChildPaging;
  /** Handles each page's children as a batch of the window's. */
  deliver: (children: Update[]) => Promise<HandledBatch>;
  tally: ChildTally;
}

/** A listing that went through: the ids it listed, and whether it answered 404. */
export type Listed = { kind: 'listed'; ids: Set<string>; missing: boolean };

/** One listing of a parent's children, each page delivered as it comes. */
async function listChildren(
  of: ParentListing,
  continued?: Continuation,
): Promise<Listed | Exclude<ChildrenEnd, { kind: 'done' }>> {
  const { ctx, epoch, window, parent, paging, deliver, tally } = of;
  const source = ctx.children?.source;
  if (source === undefined) return { kind: 'listed', ids: new Set(), missing: false };
  const { id, version, versionMs, record } = parent;
  const listing: Window = { ...window, parent: { id, version, versionMs, record } };
  const ids = new Set<string>();
  let missing = false;
  const before = paging.tally.pages;
  try {
    for await (const step of pages(listing, { ...paging, source, continued })) {
      if (step.kind === 'failed')
        return { ...step, error: `children of ${parent.id}: ${step.error}` };
      if (step.kind !== 'page') return step;
      const { page } = step;
      if (page.missing) missing = true;
      const where = `children of ${parent.id}, page ${step.number}`;
      if (!deadLetterUnreadable(ctx, epoch, tally, page.malformed, where)) {
        return { kind: 'fenced' };
      }
      const children = page.updates.map((child) => childOf(parent, child));
      for (const child of children) ids.add(child.id);
      const batch = await deliver(children);
      if (batch.kind !== 'handled') return batch;
      if (batch.stop !== undefined) return { kind: 'stopped', stop: batch.stop };
    }
  } finally {
    tally.childRequests += paging.tally.pages - before;
  }
  return { kind: 'listed', ids, missing };
}
