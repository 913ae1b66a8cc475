/**
 * Catch-up time for a 7-day backlog at 10 updates/s with max_window = "1h", in virtual time:
 * the real engine against an upstream that answers a page in PAGE_MS and a receiver that
 * takes a batch in POST_MS. Compared with the floor that the upstream and receiver latency
 * alone impose (every page and every batch, one after the other).
 */

import { VirtualClock } from '../sim/clock.ts';
import { loadPoller } from '../src/config/load.ts';
import { MemoryStore } from '../src/engine/memory-store.ts';
import { PollerEngine } from '../src/engine/poller.ts';
import type { PageResult, Update } from '../src/engine/ports.ts';

export interface CatchUp {
  days: number;
  perSecond: number;
  records: number;
  pages: number;
  batches: number;
  runs: number;
  virtualSeconds: number;
  floorSeconds: number;
}

export async function catchUp(
  days = 7,
  perSecond = 10,
  pageMs = 100,
  postMs = 50,
): Promise<CatchUp> {
  const start = Date.parse('2026-01-01T00:00:00Z');
  const span = days * 86_400_000;
  const clock = new VirtualClock(start + span);
  const step = 1000 / perSecond;
  const entry = loadPoller(
    'catchup',
    {
      cron: '* * * * *',
      start_from: new Date(start).toISOString(),
      max_window: '1h',
      lease_ttl: '20m',
      max_run: '14m',
      max_subrequests: 1000,
      source: {
        url: 'https://upstream.bench/items',
        from_param: 'from',
        to_param: 'to',
        next: { type: 'cursor', param: 'cursor', path: 'next' },
      },
      deliver: { type: 'handler', name: 'x' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  const config = {
    ...entry.config,
    deliver: {
      type: 'webhook' as const,
      url: 'https://receiver.bench/hook',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      batch: 100,
      timeout: entry.config.deliver.timeout,
      concurrency: entry.config.deliver.concurrency,
    },
  };
  let pages = 0;
  let batches = 0;
  let records = 0;
  const store = new MemoryStore();
  let alarmAt: number | null = null;
  const engine = new PollerEngine(
    {
      poller: 'catchup',
      config,
      store,
      source: {
        // Record k happened at start + k·step: a steady stream, generated as it is asked for.
        fetchPage: async (window, cursor): Promise<PageResult> => {
          await clock.sleep(pageMs);
          pages += 1;
          const first = Math.max(0, Math.ceil((window.from - start) / step));
          const end = Math.min(Math.ceil((window.to - start) / step), Math.floor(span / step));
          const offset = Number(cursor ?? 0);
          const updates: Update[] = [];
          for (let k = first + offset; k < Math.min(end, first + offset + 100); k += 1) {
            const at = start + k * step;
            const version = new Date(at).toISOString();
            updates.push({ id: `r${k % 5000}`, version, versionMs: at, record: { k } });
          }
          const next = first + offset + 100 < end ? String(offset + 100) : null;
          return { ok: true, updates, malformed: [], next };
        },
      },
      deliverer: {
        deliver: async (items) => {
          await clock.sleep(postMs);
          batches += 1;
          records += items.length;
          return { kind: 'delivered' };
        },
      },
      now: () => clock.now,
      random: Math.random,
    },
    {
      set: async (at) => {
        alarmAt = at;
      },
    },
  );
  const began = clock.now;
  await engine.trigger('cron');
  let runs = 0;
  while (alarmAt !== null && runs < 100_000) {
    const due: number = alarmAt;
    alarmAt = null;
    await clock.advanceTo(Math.max(due, clock.now));
    runs += 1;
    let finished = false;
    const run = engine.onAlarm().finally(() => {
      finished = true;
    });
    await clock.runUntil(() => finished);
    await run;
  }
  return {
    days,
    perSecond,
    records,
    pages,
    batches,
    runs,
    virtualSeconds: (clock.now - began) / 1000,
    floorSeconds: (pages * pageMs + batches * postMs) / 1000,
  };
}
