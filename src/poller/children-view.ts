import type { ChildProgress } from '../engine/children.ts';

/** source.children as status shows it: the child listing a run stopped in, if any. */
export interface ChildrenView {
  /**
   * The parent whose children a run stopped listing (a budget stop, a crash): the next run
   * continues at the page after `pages` handled ones. Null: no listing is in progress.
   */
  listing: { parent: string; parent_version: string; pages: number } | null;
}

/** Shapes a poller's child listing for status (null: the poller has no source.children). */
export function childrenView(progress: ChildProgress | null | undefined): ChildrenView | null {
  if (progress === undefined) return null;
  if (progress === null) return { listing: null };
  // The kept parent is its ledger key: the id, a NUL, the version (engine/ports.ts ledgerKey).
  const cut = progress.parent.indexOf('\u0000');
  const parent = cut === -1 ? progress.parent : progress.parent.slice(0, cut);
  const version = cut === -1 ? '' : progress.parent.slice(cut + 1);
  return { listing: { parent, parent_version: version, pages: progress.pages } };
}
