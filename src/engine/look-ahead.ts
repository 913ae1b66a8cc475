import type { RunBudget } from './budget.ts';
import type { PageResult } from './ports.ts';

/** A page asked for ahead, its failure kept for when it is taken (never unhandled). */
type Fetched = { ok: true; page: PageResult } | { ok: false; error: unknown };

/** The one page of a window asked for ahead of its turn, until it is taken or cancelled. */
export class PageAhead {
  private asked: { page: Promise<Fetched>; cancel: AbortController } | null = null;

  /** Whether a page was asked for and not taken yet. */
  get pending(): boolean {
    return this.asked !== null;
  }

  /** Asks for the page now; its failure waits, as a value, until the page is taken. */
  ask(request: (cancel: AbortSignal) => Promise<PageResult>): void {
    const cancel = new AbortController();
    const page = request(cancel.signal).then(
      (result): Fetched => ({ ok: true, page: result }),
      (error: unknown): Fetched => ({ ok: false, error }),
    );
    this.asked = { page, cancel };
  }

  /** Takes the page asked for (null if none): its answer, or the request's failure thrown. */
  take(): Promise<PageResult> | null {
    const asked = this.asked;
    if (asked === null) return null;
    this.asked = null;
    return asked.page.then((fetched) => {
      if (fetched.ok) return fetched.page;
      throw fetched.error;
    });
  }

  /** Cancels the page asked for and not taken, if any: its request is aborted. */
  cancel(): void {
    this.asked?.cancel.abort(new DOMException('the window ended before this page', 'AbortError'));
    this.asked = null;
  }
}

/** Connections a Worker has open at once; more wait for one to close. */
const CONNECTIONS = 6;

/** What a page's deliveries take: their requests and their widest round (a DeliveryPlan). */
export interface AheadNeeds {
  requests: number;
  width: number;
}

/** What the page stream knows when a page's deliveries are planned. */
export interface AheadState {
  /** The cursor of the next page (null: this was the last). */
  next: string | null;
  /** The cursors this window already sent. */
  cursors: ReadonlySet<string>;
  pageDelay: number | undefined;
  tally: { rateLimitedUntil: number | null };
  budget: RunBudget;
  now: number;
}

/**
 * Whether to ask for the next page now, while this page's deliveries are in flight: a page
 * then costs about the longer of the two requests instead of their sum. Only what the stream
 * would have asked for next anyway: the same cursor (not a loop), no rate limit pending, no
 * page_delay to keep; and only while it costs this page nothing: the subrequest budget keeps
 * enough for every request of this page's delivery, and with them it stays within the
 * connection limit. The next page's updates go out only after this page's are settled, so
 * the per-id order, the ledger and the commits are what they would have been. Takes the
 * request from the budget when it says yes.
 */
export function lookAhead(state: AheadState, needs: AheadNeeds): boolean {
  const { next, budget, now } = state;
  if (next === null || state.cursors.has(next)) return false;
  if (state.pageDelay !== undefined) return false;
  const pause = state.tally.rateLimitedUntil;
  if (pause !== null && pause > now) return false;
  if (needs.width + 1 > CONNECTIONS || budget.remaining <= needs.requests) return false;
  return budget.take(now) === null;
}
