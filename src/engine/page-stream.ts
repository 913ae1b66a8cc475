import { shownToken } from '../config/resume.ts';
import type { FailureKind } from './backoff.ts';
import type { BudgetStop, RunBudget } from './budget.ts';
import { type AheadNeeds, lookAhead, PageAhead } from './look-ahead.ts';
import type { PageResult, Source } from './ports.ts';
import type { RoundListing } from './round-listing.ts';
import type { Window } from './window.ts';

/** A page the upstream answered, as the stream hands it on. */
export type Page = Extract<PageResult, { ok: true }>;

/** Why a stream stopped before asking for a page: a budget, or the upstream's pause (R12). */
export type PageStop = BudgetStop | 'rate_limit';

/** The run's counters the stream keeps (a run's Tally is one): one run, many windows. */
export interface PageTally {
  /** Pages taken this run: page_delay waits before every page but the run's first. */
  pages: number;
  /** The upstream's clock minus ours, from the last page that said (R11). */
  skewMs: number | null;
  /** The upstream asked for no request before this (R12). */
  rateLimitedUntil: number | null;
}

/** What the stream needs: the source port, the run's budget and counters, a clock. */
export interface Paging {
  source: Source;
  budget: RunBudget;
  tally: PageTally;
  now: () => number;
  /** Whether the run still holds its lease (R6): checked once each page is answered. */
  holds: () => boolean;
  /** source.page_delay, waited with `sleep` before each request but the run's first. */
  pageDelay?: number | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** source.resume: the window is a round, continued from its kept cursor (R20). */
  round?: RoundPaging | undefined;
  /** source.children: one parent's listing, continued from the child page a run before kept. */
  continued?: Continuation | undefined;
}

/**
 * A listing that goes on where a run before stopped: it starts at the kept cursor (null:
 * its first page) and keeps the next cursor once each page was handled (the consumer asked
 * for the next), so a budget stop or a crash continues there.
 */
export interface Continuation {
  cursor: string | null;
  /** Pages of the listing handled before this stream (its kept cursor's page number). */
  pages: number;
  /** Keeps the next page's cursor (fenced: false when the lease was lost). */
  keep(cursor: string, pages: number): boolean;
}

/**
 * A resume round as the stream runs it: it starts at the cursor kept by the run before
 * (null: the round's first page), keeps the next cursor once each page was handled (the
 * consumer asked for the next), and ends at the page that holds the token.
 */
export interface RoundPaging {
  cursor: string | null;
  /** Pages of the round handled before this window (its kept cursor's page number). */
  pages: number;
  /** Keeps the next page's cursor (fenced: false when the lease was lost). */
  keep(cursor: string, pages: number): boolean;
  /** Set by the stream: the token the round's last page held. */
  token: string | null;
  /** The token expired: clears it and the cursor, for a round from source.url (fenced). */
  expire(reason: string): boolean;
  /** resync_deletes: a full round's pages go into its listing (engine/round-listing.ts). */
  listing?: RoundListing | null;
  /** Set by the stream: the full round's listing wants a second full round at once. */
  again?: boolean;
  /** A round that confirms deletes stores the token it did not start from (engine/rounds.ts). */
  keeps?: { token: string; at: number };
}

/** One page of the window, numbered from 1. */
export interface StreamedPage {
  kind: 'page';
  page: Page;
  number: number;
  /**
   * Asks for the next page now, while this page's deliveries are in flight, if that costs
   * them nothing (`needs`: their requests and their widest round; engine/look-ahead.ts).
   * Counts only while the consumer holds the page (before it resumes or leaves the
   * stream), and once.
   */
  askAhead(needs: AheadNeeds): void;
}

/** How a stream ended before its last page; each is the last step it yields. */
export type StreamEnd =
  /** Before asking for a page: a budget spent, or the upstream's pause not over. */
  | { kind: 'stopped'; stop: PageStop; resumeAt?: number }
  /** A page failed, or the upstream sent a next page it had already sent (a paging loop). */
  | { kind: 'failed'; failure: FailureKind; error: string; retryAfter?: number }
  /** The lease was lost while a page was asked for (R6): nothing more is asked. */
  | { kind: 'fenced' };

/** What the stream yields: a page, or (last) why it ended before its last page. */
export type StreamStep = StreamedPage | StreamEnd;

/**
 * Every page of one window, in order: asks the source for each with the cursor the page
 * before gave, and keeps what paging needs (the cursors seen, the run's budget, page_delay,
 * the upstream's pause, the page asked for ahead). It ends after the last page (`next`
 * null), or with a `StreamEnd`. The consumer resumes it only to go on: leaving the loop
 * (return, break, throw) closes it, and a page asked for ahead that was not taken is
 * cancelled then, so no request of a run outlives its window (the next run's first request
 * would overlap it).
 */
export async function* pages(
  window: Window,
  paging: Paging,
): AsyncGenerator<StreamStep, void, undefined> {
  const { source, budget, tally, now } = paging;
  const cursors = new Set<string>();
  const round = paging.round;
  const continued = paging.continued;
  let cursor: string | null = round?.cursor ?? continued?.cursor ?? null;
  if (cursor !== null) cursors.add(cursor);
  let number = 0;
  // The window as requested: a resync swaps a round from a token for one from source.url.
  let current = window;
  // A round's pages before this window's first (its kept cursor's), so that number + base
  // counts the round's pages; a resync restarts the count.
  let base = round?.pages ?? 0;
  const ahead = new PageAhead();
  // The number of the page the consumer holds (0: none): the one it may ask ahead of.
  let held = 0;
  try {
    for (;;) {
      const early = ahead.take();
      let result: PageResult;
      if (early !== null) {
        result = await early;
        // Asked for early: it counts only if the stream could have asked for it now. A run
        // out of time leaves it, as it would have left it unasked (the rest was checked then).
        if (budget.expired(now())) {
          yield { kind: 'stopped', stop: 'max_run' };
          return;
        }
      } else {
        if (tally.pages > 0 && paging.pageDelay !== undefined) {
          await paging.sleep?.(paging.pageDelay);
        }
        // R12: once the upstream said its quota is spent, not one request before the reset.
        const pause = tally.rateLimitedUntil;
        if (pause !== null && pause > now()) {
          yield { kind: 'stopped', stop: 'rate_limit', resumeAt: pause };
          return;
        }
        const stop = budget.take(now());
        if (stop) {
          yield { kind: 'stopped', stop };
          return;
        }
        result = await source.fetchPage(current, cursor);
      }
      if (!paging.holds()) {
        yield { kind: 'fenced' };
        return;
      }
      number += 1;
      tally.pages += 1;
      if (result.skewMs !== undefined) tally.skewMs = result.skewMs;
      if (!result.ok) {
        // source.resume: the upstream no longer knows the round's token. A resync: a round
        // from source.url, in this window; what it lists unchanged is not sent again (the
        // memory of ids and content hashes, engine/unchanged.ts).
        if (round !== undefined && result.expired && current.round?.token != null) {
          if (!round.expire(`page ${number}: ${result.error}`)) {
            yield { kind: 'fenced' };
            return;
          }
          current = { ...window, round: { token: null } };
          cursor = null;
          cursors.clear();
          base = -number;
          continue;
        }
        yield failedPage(result, number, tally);
        return;
      }
      if (result.pauseUntil !== undefined) tally.rateLimitedUntil = result.pauseUntil;

      const next = result.next;
      const taken = number;
      held = taken;
      yield {
        kind: 'page',
        page: result,
        number,
        askAhead(needs) {
          // Only while the consumer holds this page: once the stream closed, nothing would
          // cancel it (once it went on, its cursor is among those sent).
          if (held !== taken || ahead.pending || next === null) return;
          const asked = { next, cursors, pageDelay: paging.pageDelay, tally, budget, now: now() };
          if (lookAhead(asked, needs)) {
            ahead.ask((cancel) => source.fetchPage(current, next, cancel));
          }
        },
      };
      if (round !== undefined) {
        // A full round (from source.url) lists every id: its page joins the listing, handled.
        if (round.listing && current.round?.token == null) {
          const last = result.resume !== undefined;
          const listed = round.listing.listed(result, base + number, last);
          if (listed === 'fenced') {
            yield { kind: 'fenced' };
            return;
          }
          round.again = listed;
        }
        // The round ends at the page with the token, whatever it says of a next page.
        if (result.resume !== undefined) {
          round.token = result.resume;
          return;
        }
        if (next === null) {
          yield roundWithoutToken(number);
          return;
        }
        // Resumed: the consumer handled this page. A budget stop or a crash from here on
        // continues at the next one, never from the round's start (R20).
        if (!round.keep(next, base + number)) {
          yield { kind: 'fenced' };
          return;
        }
      }
      if (next === null) return;
      if (cursors.has(next)) {
        yield pagingLoop(round === undefined ? next : shownToken(next), number);
        return;
      }
      // Resumed: this page was handled; a stop or a crash from here continues at the next.
      if (continued !== undefined && !continued.keep(next, continued.pages + number)) {
        yield { kind: 'fenced' };
        return;
      }
      cursors.add(next);
      cursor = next;
    }
  } finally {
    held = 0;
    ahead.cancel();
  }
}

/** A page the upstream refused: the window fails; a rate limit's reset pauses the run (R12). */
function failedPage(
  result: Extract<PageResult, { ok: false }>,
  number: number,
  tally: PageTally,
): StreamEnd {
  if (result.kind === 'rate_limited' && result.retryAfter !== undefined) {
    tally.rateLimitedUntil = result.retryAfter;
  }
  const failure: FailureKind = result.kind === 'bad_response' ? 'transient' : result.kind;
  const error = `page ${number}: ${result.error}`;
  return {
    kind: 'failed',
    failure,
    error,
    ...(result.retryAfter === undefined ? {} : { retryAfter: result.retryAfter }),
  };
}

/**
 * A next page the upstream already sent in this window: asked again, it would never end.
 * `next` as errors show it (a round's cursor shortened: it carries the round's state).
 */
function pagingLoop(next: string, number: number): StreamEnd {
  const shown = next.length > 80 ? `${next.slice(0, 80)}…` : next;
  return {
    kind: 'failed',
    failure: 'transient',
    error: `page ${number}: paging loop: the upstream sent a next page it had already sent in this window (${shown})`,
  };
}

/** A round whose last page holds no token: the next round could not start, so it fails. */
function roundWithoutToken(number: number): StreamEnd {
  return {
    kind: 'failed',
    failure: 'transient',
    error: `page ${number}: the round's last page holds no token at source.resume.path`,
  };
}
