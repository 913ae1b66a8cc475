import type { RunBudget } from './budget.ts';
import type { DeliveryPlan } from './delivery-plan.ts';
import type { PageResult, RunContext } from './ports.ts';

/** A page asked for ahead, its failure kept for when it is taken (never unhandled). */
export type Fetched = { ok: true; page: PageResult } | { ok: false; error: unknown };

/** A page request whose failure waits, as a value, until the window takes the page. */
export function settled(page: Promise<PageResult>): Promise<Fetched> {
  return page.then(
    (result) => ({ ok: true, page: result }),
    (error: unknown) => ({ ok: false, error }),
  );
}

/** Connections a Worker has open at once; more wait for one to close. */
const CONNECTIONS = 6;

/**
 * Whether to ask for the next page now, while this page's deliveries are in flight: a page
 * then costs about the longer of the two requests instead of their sum. Only what the loop
 * would have asked for next anyway: the same cursor (not a loop), no rate limit pending, no
 * page_delay to keep; and only while it costs this page nothing: the subrequest budget keeps
 * enough for every request of this page's delivery, and with them it stays within the
 * connection limit. The next page's updates go out only after this page's are settled, so
 * the per-id order, the ledger and the commits are what they would have been. Takes the
 * request from the budget when it says yes.
 */
export function lookAhead(
  ctx: RunContext,
  result: { next: string | null },
  plan: DeliveryPlan,
  budget: RunBudget,
  rateLimitedUntil: number | null,
  cursors: Set<string>,
): boolean {
  const now = ctx.now();
  if (result.next === null || cursors.has(result.next)) return false;
  if (ctx.config.source.page_delay !== undefined) return false;
  if (rateLimitedUntil !== null && rateLimitedUntil > now) return false;
  if (plan.width + 1 > CONNECTIONS || budget.remaining <= plan.requests) return false;
  return budget.take(now) === null;
}
