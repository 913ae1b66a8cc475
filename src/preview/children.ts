import { childOf } from '../engine/children.ts';
import type { RunContext, Update } from '../engine/ports.ts';
import type { Window } from '../engine/window.ts';
import { type PreviewRecord, recordView } from './records.ts';
import type { PreviewWarning } from './warnings.ts';

/**
 * source.children in a preview: the first page of each parent's children, as a run would
 * read it (`{parent.…}` filled from the parent, each child as `<parent id>/<child id>`),
 * while the preview has room for records (one request a record at most). A child request
 * that fails is a warning: a run would fail its window there.
 */
export async function previewChildren(
  context: RunContext,
  window: Window,
  parents: readonly Update[],
  room: () => number,
  mayGo: () => boolean = () => true,
): Promise<{ records: PreviewRecord[]; warnings: PreviewWarning[] }> {
  const records: PreviewRecord[] = [];
  const warnings: PreviewWarning[] = [];
  const source = context.children?.source;
  if (source === undefined) return { records, warnings };
  // Each request takes a record's room, even one that lists none: the preview's requests
  // stay bounded by its `records` limit.
  let asked = 0;
  for (const parent of parents) {
    if (records.length + asked >= room() || !mayGo()) break;
    asked += 1;
    const { id, version, versionMs, record } = parent;
    const answer = await source.fetchPage(
      { ...window, parent: { id, version, versionMs, record } },
      null,
    );
    if (!answer.ok) {
      warnings.push({
        kind: 'children_failed',
        message: `the children of ${parent.id} could not be read, so a run would fail its window there: ${answer.error}`,
      });
      continue;
    }
    if (answer.missing) {
      // A run takes a 404 for a parent gone meanwhile; for every parent, it is a wrong URL.
      warnings.push({
        kind: 'children_missing',
        message: `the children of ${parent.id} answered 404, which a run takes as "no children" (the parent went away): if every parent's do, check source.children.url`,
      });
    }
    const read = [...answer.updates.map((child) => childOf(parent, child)), ...answer.malformed];
    for (const child of read.slice(0, Math.max(0, room() - records.length - asked + 1))) {
      records.push(recordView(child, null));
    }
  }
  return { records, warnings };
}
