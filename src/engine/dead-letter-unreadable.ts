import { unreadableKey } from './idempotency.ts';
import type { MalformedRecord, RunContext } from './ports.ts';

/** Records the source could not read become dead letters (R8); false when fenced. */
export function deadLetterUnreadable(
  ctx: Pick<RunContext, 'poller' | 'store' | 'now'>,
  epoch: number,
  tally: { deadLettered: number },
  malformed: readonly MalformedRecord[],
  /** Where they were: `page 3`, `children of PROJ-1, page 2`. */
  where: string,
): boolean {
  for (const unreadable of malformed) {
    const now = ctx.now();
    const letter = {
      key: unreadableKey(ctx.poller, unreadable.raw),
      kind: 'unreadable' as const,
      id: null,
      version: null,
      versionMs: null,
      record: unreadable.raw,
      error: `${where}: ${unreadable.reason}`,
      attempts: 1,
      firstFailure: now,
      lastFailure: now,
    };
    if (!ctx.store.deadLetter(epoch, letter)) return false;
    tally.deadLettered += 1;
  }
  return true;
}
