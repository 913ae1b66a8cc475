import type { RunBudget } from './budget.ts';
import type { PendingChange, RunContext } from './ports.ts';
import type { FetchById } from './reconcile-ports.ts';

/**
 * What reconcile.fetch answers a reconciliation (engine/reconcile.ts) about one change it
 * found: an upsert's whole record, or whether a delete is confirmed (R16). Each fetch takes
 * one request of the run's budget (`'budget'` when none is left).
 */

/** An error to retry with the reconciliation's backoff, or the budget spent. */
type NotNow = { error: string } | 'budget';

/** An upsert's record: the listing's, or fetched by id (null: gone since, or unaddressable). */
export async function recordOf(
  fetchById: FetchById | null,
  change: PendingChange,
  ctx: RunContext,
  budget: RunBudget,
): Promise<{ value: unknown } | NotNow> {
  if (fetchById === null) return { value: change.record };
  if (budget.take(ctx.now())) return 'budget';
  const fetched = await fetchById(change.id);
  if (!fetched.ok && fetched.unaddressable) {
    dropped(ctx, change, fetched.error);
    return { value: null };
  }
  if (!fetched.ok) return { error: `fetch ${change.id}: ${fetched.error}` };
  return { value: fetched.record };
}

/**
 * Whether a delete is confirmed gone: with reconcile.fetch, only when it answers 404 or 410
 * for the id (a record it answers is live: the listing skipped it); without, it was confirmed
 * before it became pending (a second listing, or an admin's confirm).
 */
export async function goneById(
  fetchById: FetchById | null,
  change: PendingChange,
  ctx: RunContext,
  budget: RunBudget,
): Promise<boolean | NotNow> {
  if (fetchById === null) return true;
  if (budget.take(ctx.now())) return 'budget';
  const fetched = await fetchById(change.id);
  if (!fetched.ok && fetched.unaddressable) {
    dropped(ctx, change, fetched.error);
    return false;
  }
  if (!fetched.ok) return { error: `fetch ${change.id}: ${fetched.error}` };
  return fetched.record === null;
}

/**
 * An id reconcile.fetch cannot ask for (it would change the path): nothing about it can be
 * confirmed, so its change is dropped, with a warning, rather than retried for ever.
 */
function dropped(ctx: RunContext, change: PendingChange, error: string): void {
  ctx.log?.({
    event: 'reconcile_dropped',
    level: 'warn',
    poller: ctx.poller,
    op: change.op,
    error,
  });
}
