import { describe, expect, it } from 'vitest';
import { RunBudget } from '../../src/engine/budget.ts';
import type { AheadNeeds } from '../../src/engine/look-ahead.ts';
import {
  type Page,
  type PageTally,
  type Paging,
  pages,
  type StreamEnd,
  type StreamStep,
} from '../../src/engine/page-stream.ts';
import type { PageResult } from '../../src/engine/ports.ts';
import type { Window } from '../../src/engine/window.ts';

const T0 = Date.parse('2026-06-01T00:00:00Z');
const WINDOW: Window = { from: T0 - 3_600_000, to: T0, bounded: false, startedAt: T0, cut: false };

/** A page whose next page is `next` (null: the last), with one update. */
function page(next: string | null, extra: Partial<Page> = {}): Page {
  const update = { id: `r${next}`, version: 'v', versionMs: T0 - 1_000, record: {} };
  return { ok: true, updates: [update], malformed: [], next, ...extra };
}

/**
 * A stream over a source that answers each cursor (`''` for the first page) as `answers`
 * says, and logs every request with the signal that can cancel it.
 */
function harness(
  answers: Record<string, PageResult | (() => Promise<PageResult>)>,
  options: {
    maxSubrequests?: number;
    maxRunMs?: number;
    tally?: Partial<PageTally>;
    pageDelay?: number;
    holds?: () => boolean;
  } = {},
) {
  const clock = { now: T0 };
  const requests: { cursor: string | null; cancel: AbortSignal | undefined }[] = [];
  const sleeps: number[] = [];
  const tally: PageTally = { pages: 0, skewMs: null, rateLimitedUntil: null, ...options.tally };
  const budget = new RunBudget(T0, options.maxRunMs ?? 60_000, options.maxSubrequests ?? 100);
  const paging: Paging = {
    source: {
      async fetchPage(_window, cursor, cancel) {
        requests.push({ cursor, cancel });
        const answer = answers[cursor ?? ''];
        if (answer === undefined) throw new Error(`no page for cursor ${cursor}`);
        return typeof answer === 'function' ? answer() : answer;
      },
    },
    budget,
    tally,
    now: () => clock.now,
    holds: options.holds ?? (() => true),
    pageDelay: options.pageDelay,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  };
  return { stream: pages(WINDOW, paging), requests, sleeps, tally, budget, clock };
}

/** Every step of a stream, taking each page as a consumer that never asks ahead. */
async function steps(stream: AsyncGenerator<StreamStep, void, undefined>): Promise<StreamStep[]> {
  const all: StreamStep[] = [];
  for await (const step of stream) all.push(step);
  return all;
}

function numbers(all: StreamStep[]): number[] {
  return all.flatMap((step) => (step.kind === 'page' ? [step.number] : []));
}

function end(all: StreamStep[]): StreamEnd | undefined {
  const last = all.at(-1);
  return last === undefined || last.kind === 'page' ? undefined : last;
}

/** What a page's deliveries need when they cost the page nothing to look ahead. */
const CHEAP = { width: 1, requests: 1 };

describe('the pages of a window', () => {
  it('asks for the first page without a cursor, and each next one with the cursor the page before gave', async () => {
    const h = harness({ '': page('p2'), p2: page('p3'), p3: page(null) });
    const all = await steps(h.stream);
    expect(h.requests.map((request) => request.cursor)).toEqual([null, 'p2', 'p3']);
    expect(numbers(all)).toEqual([1, 2, 3]);
    expect(end(all)).toBeUndefined(); // ended by its last page, not stopped
    expect(h.tally.pages).toBe(3);
  });

  it('a cursor sent twice fails the window as a paging loop, without asking for it again', async () => {
    const h = harness({ '': page('a'), a: page('b'), b: page('a') });
    const all = await steps(h.stream);
    expect(numbers(all)).toEqual([1, 2, 3]);
    expect(end(all)).toMatchObject({ kind: 'failed', failure: 'transient' });
    expect(end(all)).toHaveProperty(
      'error',
      expect.stringMatching(/^page 3: paging loop: .*\(a\)$/),
    );
    expect(h.requests).toHaveLength(3);
  });

  it('a page the upstream refuses fails the window with its number, and its reset pauses the run (R12)', async () => {
    const reset = T0 + 60_000;
    const h = harness({
      '': page('p2'),
      p2: { ok: false, kind: 'rate_limited', error: 'HTTP 429', retryAfter: reset, skewMs: 250 },
    });
    const all = await steps(h.stream);
    expect(end(all)).toEqual({
      kind: 'failed',
      failure: 'rate_limited',
      error: 'page 2: HTTP 429',
      retryAfter: reset,
    });
    expect(h.tally).toMatchObject({ pages: 2, rateLimitedUntil: reset, skewMs: 250 });
  });

  it('a page that says its quota is spent stops the stream before the next request, until the reset', async () => {
    const reset = T0 + 60_000;
    const h = harness({ '': page('p2', { pauseUntil: reset }), p2: page(null) });
    const all = await steps(h.stream);
    expect(numbers(all)).toEqual([1]);
    expect(end(all)).toEqual({ kind: 'stopped', stop: 'rate_limit', resumeAt: reset });
    expect(h.requests).toHaveLength(1);
  });

  it("asks nothing while an earlier window's pause lasts", async () => {
    const h = harness({ '': page(null) }, { tally: { rateLimitedUntil: T0 + 1 } });
    const all = await steps(h.stream);
    expect(all).toEqual([{ kind: 'stopped', stop: 'rate_limit', resumeAt: T0 + 1 }]);
    expect(h.requests).toHaveLength(0);
  });

  it("takes a subrequest of the run's budget for each request, and stops before one it has not", async () => {
    const h = harness({ '': page('p2'), p2: page('p3'), p3: page(null) }, { maxSubrequests: 2 });
    const all = await steps(h.stream);
    expect(numbers(all)).toEqual([1, 2]);
    expect(end(all)).toEqual({ kind: 'stopped', stop: 'subrequests' });
    expect(h.requests).toHaveLength(2);
    expect(h.budget.subrequests).toBe(2);
  });

  it('stops before a request once the run is out of time (max_run)', async () => {
    const h = harness({ '': page('p2'), p2: page(null) }, { maxRunMs: 1_000 });
    const all: StreamStep[] = [];
    for await (const step of h.stream) {
      all.push(step);
      h.clock.now += 1_000;
    }
    expect(numbers(all)).toEqual([1]);
    expect(end(all)).toEqual({ kind: 'stopped', stop: 'max_run' });
  });

  it("waits page_delay before every request but the run's first", async () => {
    const answers = { '': page('p2'), p2: page('p3'), p3: page(null) };
    const first = harness(answers, { pageDelay: 500 });
    await steps(first.stream);
    expect(first.sleeps).toEqual([500, 500]);
    // A later window of the same run waits before its first page too.
    const later = harness(answers, { pageDelay: 500, tally: { pages: 4 } });
    await steps(later.stream);
    expect(later.sleeps).toEqual([500, 500, 500]);
  });

  it('ends fenced when the lease was lost while a page was asked for, the page not counted', async () => {
    const h = harness({ '': page('p2') }, { holds: () => false });
    const all = await steps(h.stream);
    expect(all).toEqual([{ kind: 'fenced' }]);
    expect(h.tally.pages).toBe(0);
  });
});

describe('the page asked for ahead', () => {
  it('is asked for while the consumer holds this page, and is the next page it gets', async () => {
    const h = harness({ '': page('p2'), p2: page(null) });
    const got: number[] = [];
    for await (const step of h.stream) {
      if (step.kind !== 'page') throw new Error(step.kind);
      got.push(step.number);
      step.askAhead(CHEAP);
      // Asked before the consumer goes on: its request overlaps this page's deliveries.
      if (step.number === 1) expect(h.requests.map((r) => r.cursor)).toEqual([null, 'p2']);
    }
    expect(got).toEqual([1, 2]);
    expect(h.requests).toHaveLength(2);
    expect(h.budget.subrequests).toBe(2);
    expect(h.requests[1]?.cancel?.aborted).toBe(false);
  });

  it('a window that ends before taking the page asked ahead cancels it', async () => {
    const h = harness({ '': page('p2'), p2: page(null) });
    for await (const step of h.stream) {
      if (step.kind === 'page') step.askAhead(CHEAP);
      break;
    }
    expect(h.requests.map((r) => r.cursor)).toEqual([null, 'p2']);
    expect(h.requests[1]?.cancel?.aborted).toBe(true);
  });

  it('a consumer that throws while it holds a page cancels the page asked ahead', async () => {
    const h = harness({ '': page('p2'), p2: page(null) });
    const consume = async () => {
      for await (const step of h.stream) {
        if (step.kind === 'page') step.askAhead(CHEAP);
        throw new Error('the delivery broke');
      }
    };
    await expect(consume()).rejects.toThrow('the delivery broke');
    expect(h.requests[1]?.cancel?.aborted).toBe(true);
  });

  it('is not asked for by a page the consumer no longer holds', async () => {
    const h = harness({ '': page('p2'), p2: page('p3'), p3: page(null) });
    const held: StreamStep[] = [];
    for await (const step of h.stream) {
      held.push(step);
      if (held.length === 2) break;
    }
    const [first, second] = held;
    if (first?.kind !== 'page' || second?.kind !== 'page') throw new Error('two pages');
    first.askAhead(CHEAP); // the stream went on past it
    second.askAhead(CHEAP); // the stream was closed
    expect(h.requests.map((r) => r.cursor)).toEqual([null, 'p2']);
  });

  it('is asked for once per page, however often the consumer asks', async () => {
    const h = harness({ '': page('p2'), p2: page(null) });
    for await (const step of h.stream) {
      if (step.kind !== 'page') continue;
      step.askAhead(CHEAP);
      step.askAhead(CHEAP);
    }
    expect(h.requests.map((r) => r.cursor)).toEqual([null, 'p2']);
    expect(h.budget.subrequests).toBe(2);
  });

  it('is dropped, not handed on, when max_run is spent by the time it is taken', async () => {
    const h = harness({ '': page('p2'), p2: page(null) }, { maxRunMs: 1_000 });
    const all: StreamStep[] = [];
    for await (const step of h.stream) {
      all.push(step);
      if (step.kind === 'page') step.askAhead(CHEAP);
      h.clock.now += 1_000;
    }
    expect(numbers(all)).toEqual([1]);
    expect(end(all)).toEqual({ kind: 'stopped', stop: 'max_run' });
    expect(h.tally.pages).toBe(1);
  });

  it('fails when it is taken, not while the page before is delivered', async () => {
    const h = harness({ '': page('p2'), p2: () => Promise.reject(new Error('connection reset')) });
    let held = 0;
    const consume = async () => {
      for await (const step of h.stream) {
        if (step.kind !== 'page') continue;
        step.askAhead(CHEAP);
        // Its failure has happened by now, and waits for its turn.
        await new Promise((resolve) => setTimeout(resolve, 1));
        held += 1;
      }
    };
    await expect(consume()).rejects.toThrow('connection reset');
    expect(held).toBe(1);
  });

  it.each<[string, { needs?: AheadNeeds; options?: Parameters<typeof harness>[1]; first?: Page }]>([
    [
      "when this page's deliveries need the rest of the budget",
      { needs: { width: 1, requests: 1 }, options: { maxSubrequests: 2 } },
    ],
    ['past the connection limit', { needs: { width: 6, requests: 6 } }],
    ['with a page_delay to keep', { options: { pageDelay: 100 } }],
    ["while the upstream's pause lasts", { first: page('p2', { pauseUntil: T0 + 60_000 }) }],
  ])('is not asked for %s', async (_case, { needs, options, first }) => {
    const h = harness({ '': first ?? page('p2'), p2: page(null) }, options);
    const step = (await h.stream.next()).value;
    if (step?.kind !== 'page') throw new Error(`no page: ${JSON.stringify(step)}`);
    step.askAhead(needs ?? CHEAP);
    expect(h.requests.map((r) => r.cursor)).toEqual([null]);
    expect(h.budget.subrequests).toBe(1);
    await h.stream.return();
  });

  it('is not asked for a cursor the window already sent: the paging loop is found in its turn', async () => {
    const h = harness({ '': page('a'), a: page('a') });
    const all: StreamStep[] = [];
    for await (const step of h.stream) {
      all.push(step);
      if (step.kind === 'page') step.askAhead(CHEAP);
    }
    expect(h.requests.map((r) => r.cursor)).toEqual([null, 'a']);
    expect(end(all)).toMatchObject({
      kind: 'failed',
      error: expect.stringContaining('paging loop'),
    });
  });
});
