import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { DeliveryResult } from '../../src/engine/classify.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type {
  DeliveryItem,
  PageResult,
  RunContext,
  RunRecord,
  Update,
} from '../../src/engine/ports.ts';

const START = Date.parse('2026-06-01T00:00:00Z');

/** One update per `[id, second]`, stamped that many seconds after START. */
function updates(...pairs: [string, number][]): Update[] {
  return pairs.map(([id, second]) => {
    const versionMs = START + second * 1000;
    const version = new Date(versionMs).toISOString();
    return { id, version, versionMs, record: { id, version } };
  });
}

/**
 * A poller over fixed pages (a cursor), whose page requests and deliveries are logged in the
 * order they start and end, and can be made slow: a clock that moves `pageMs` per page and
 * `postMs` per delivery, as the requests are answered.
 */
function harness(
  pages: Update[][],
  options: { maxSubrequests?: number; maxRun?: string; receiver?: DeliveryResult } = {},
) {
  const clock = { now: START + 3_600_000 };
  const log: string[] = [];
  /** The cancel signal each page request was given, by page. */
  const cancels: AbortSignal[] = [];
  const delivered: string[] = [];
  const entry = loadPoller(
    'ahead',
    {
      cron: '0 0 1 1 *',
      start_from: new Date(START).toISOString(),
      max_subrequests: options.maxSubrequests ?? 100,
      ...(options.maxRun ? { max_run: options.maxRun, lease_ttl: '1h' } : {}),
      source: {
        url: 'https://upstream.test/x',
        from_param: 'from',
        sorted: 'asc',
        next: { type: 'cursor', param: 'cursor', path: 'next' },
      },
      deliver: { type: 'webhook', url: 'https://receiver.test/', secret: 'x', batch: 100 },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
  const context: RunContext = {
    poller: 'ahead',
    config: entry.config,
    store: new MemoryStore(),
    source: {
      async fetchPage(_window, cursor, cancel): Promise<PageResult> {
        const index = Number(cursor ?? 0);
        if (cancel) cancels[index] = cancel;
        log.push(`fetch ${index} start`);
        await tick();
        clock.now += 100;
        log.push(`fetch ${index} end`);
        const next = index + 1 < pages.length ? String(index + 1) : null;
        return { ok: true, updates: pages[index] ?? [], malformed: [], next };
      },
    },
    deliverer: {
      async deliver(items: DeliveryItem[]): Promise<DeliveryResult> {
        const ids = items.map(
          (item) => `${item.update.id}@${(item.update.versionMs - START) / 1000}`,
        );
        log.push(`deliver ${ids.join(',')} start`);
        await tick();
        await tick();
        clock.now += 100;
        log.push(`deliver ${ids.join(',')} end`);
        if (options.receiver) return options.receiver;
        delivered.push(...ids);
        return { kind: 'delivered' };
      },
    },
    now: () => clock.now,
    random: () => 0.5,
  };
  const store = context.store as MemoryStore;
  const engine = new PollerEngine(context, { set: async () => {} });
  return { engine, store, log, delivered, clock, cancels };
}

async function runNow(engine: PollerEngine): Promise<RunRecord> {
  const reply = await engine.runNow();
  if (reply.outcome !== 'ran') throw new Error(JSON.stringify(reply));
  return reply.run;
}

describe('looking ahead one page while a page is delivered', () => {
  it('asks for the next page while this page is in flight, and delivers it only after', async () => {
    const h = harness([
      updates(['a', 1], ['x', 2]),
      updates(['x', 3], ['b', 4]),
      updates(['c', 5]),
    ]);
    const run = await runNow(h.engine);
    expect(run).toMatchObject({ outcome: 'success', pages: 3, records: 5 });
    // Page 1 was asked for while page 0's batch was in flight...
    expect(h.log.indexOf('fetch 1 start')).toBeLessThan(h.log.indexOf('deliver a@1,x@2 end'));
    // ...and its updates went out only once page 0's were delivered: x@2 before x@3.
    expect(h.log.indexOf('deliver x@3,b@4 start')).toBeGreaterThan(
      h.log.indexOf('deliver a@1,x@2 end'),
    );
    expect(h.delivered).toEqual(['a@1', 'x@2', 'x@3', 'b@4', 'c@5']);
  });

  it("never takes a subrequest the page's own deliveries need", async () => {
    // Two subrequests: page 0 and its batch. Asking for page 1 early would leave page 0's
    // batch without one, and its updates held over to the next run.
    const h = harness([updates(['a', 1]), updates(['b', 2])], { maxSubrequests: 2 });
    const run = await runNow(h.engine);
    expect(run).toMatchObject({ outcome: 'continued', pages: 1, records: 1 });
    expect(h.log).not.toContain('fetch 1 start');
    expect(h.delivered).toEqual(['a@1']);
    expect(h.store.failures.size).toBe(0); // nothing held: page 1 was never fetched
    expect(h.store.read().checkpoint).toBe(START + 1000);
  });

  it('drops a page asked for early when max_run is spent by the time its turn comes', async () => {
    // max_run 1s; each page and each batch takes 100 ms of the clock. The run stops with the
    // page it asked for ahead unused: nothing of it is delivered, held, or counted.
    const pages = Array.from({ length: 20 }, (_, i) => updates([`r${i}`, i + 1]));
    const h = harness(pages, { maxRun: '1s' });
    const run = await runNow(h.engine);
    expect(run.outcome).toBe('continued');
    expect(run.error).toContain('max_run');
    const fetched = h.log.filter((line) => line.endsWith('start') && line.startsWith('fetch'));
    expect(fetched.length).toBe(run.pages + 1);
    expect(h.delivered).toHaveLength(run.records);
    expect(run.records).toBe(run.pages);
    expect(h.store.failures.size).toBe(0);
    // C covers exactly what was delivered (sorted oldest first).
    expect(h.store.read().checkpoint).toBe(START + run.records * 1000);
  });
});

describe('a page asked for ahead that the run does not take', () => {
  it('is cancelled when the window ends early, so it cannot overlap the next run', async () => {
    const h = harness([updates(['a', 1]), updates(['b', 2])], {
      receiver: { kind: 'misconfigured', error: 'HTTP 401' },
    });
    const run = await runNow(h.engine);
    expect(run.outcome).toBe('failed');
    expect(h.log).toContain('fetch 1 start');
    expect(h.cancels[1]?.aborted).toBe(true);
  });

  it('is not cancelled when the run takes it', async () => {
    const h = harness([updates(['a', 1]), updates(['b', 2])]);
    await runNow(h.engine);
    expect(h.cancels[1]?.aborted).toBe(false);
  });
});

describe('a page that repeats itself', () => {
  it.each([
    ['next to each other', updates(['a', 1], ['b', 2], ['b', 2], ['c', 3])],
    ['apart, on a page out of order', updates(['b', 2], ['a', 1], ['c', 3], ['b', 2])],
    ['newest first', updates(['c', 3], ['b', 2], ['b', 2], ['a', 1])],
    ['among others stamped the same', updates(['a', 1], ['b', 2], ['c', 2], ['b', 2], ['c', 3])],
  ])('delivers an (id, version) listed twice on one page once (%s)', async (_case, page) => {
    const h = harness([page, updates(['d', 4])]);
    const run = await runNow(h.engine);
    expect(run.outcome).toBe('success');
    const once = new Set(page.map((u) => `${u.id}@${(u.versionMs - START) / 1000}`));
    expect([...h.delivered].sort()).toEqual([...once, 'd@4'].sort());
  });

  it('delivers an (id, version) repeated from the page before once, on a page in strict order', async () => {
    const h = harness([updates(['a', 1], ['b', 2]), updates(['b', 2], ['c', 3])]);
    const run = await runNow(h.engine);
    expect(run.outcome).toBe('success');
    expect(h.delivered).toEqual(['a@1', 'b@2', 'c@3']);
  });
});
