// Owns no table: the memo of next-page body paths, kept in meta (`next_paths`) through ObjectMeta.
import type { NextPathMemo } from '../../sources/paging/index.ts';
import type { ObjectMeta } from './meta.ts';

/** What the pages showed of a next-page body path: found on some page, or only missed. */
export type PathSighting = 'seen' | 'missed';

/** Paths kept: a config's few, and some earlier configs' (the oldest go first). */
const MAX_PATHS = 16;

/**
 * Which next-page body paths (`next.path`) the poller's pages had: `seen` once any page had
 * the path, `missed` when a page with records lacked it and none ever had it (status warns:
 * a misspelt path ends every window at its first page). Read once per object and kept in
 * memory; written once when a path is first missed and once when it is first seen, never
 * per page.
 */
export class NextPaths implements NextPathMemo {
  private memo: Record<string, PathSighting> | null = null;

  constructor(private readonly meta: ObjectMeta) {}

  /** Each path the pages showed something of, and what. */
  all(): Readonly<Record<string, PathSighting>> {
    this.memo ??= memoOf(this.meta.nextPaths());
    return this.memo;
  }

  saw(path: string, present: boolean): void {
    const known = this.all()[path];
    if (known === 'seen' || (known === 'missed' && !present)) return;
    const { [path]: _, ...others } = this.all();
    const kept = Object.entries(others).slice(-(MAX_PATHS - 1));
    const memo = { ...Object.fromEntries(kept), [path]: present ? 'seen' : 'missed' } as const;
    this.meta.setNextPaths(JSON.stringify(memo));
    this.memo = memo;
  }
}

/** The memo as saw() wrote it; anything else is no memo (it is only a memo: rebuilt as pages come). */
function memoOf(text: string | null): Record<string, PathSighting> {
  if (text === null) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const memo: Record<string, PathSighting> = {};
    for (const [path, value] of Object.entries(parsed)) {
      if (value === 'seen' || value === 'missed') memo[path] = value;
    }
    return memo;
  } catch {
    return {};
  }
}
