import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { SourceConfig } from '../../src/config/schema.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { RunContext } from '../../src/engine/ports.ts';
import { HttpSource } from '../../src/sources/http-source.ts';
import { boundPrecision } from '../../src/sources/time.ts';

const JIRA = 'yyyy/MM/dd HH:mm';
const at = (iso: string) => Date.parse(iso);

/** The upstream's own reading of a bound: `2026/07/01 10:00`, UTC, to the minute. */
function readMinute(text: string | null): number {
  const match = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2})$/.exec(text ?? '');
  if (match === null) throw new Error(`the upstream refuses the bound "${text}"`);
  const [, y, mo, d, h, mi] = match.map(Number);
  return Date.UTC(y ?? 0, (mo ?? 1) - 1, d ?? 1, h ?? 0, mi ?? 0);
}

/**
 * A poller whose upstream takes `from` and `to` in minutes (`from <= stamp < to`), with a
 * clock the test moves; what it delivered and each checkpoint beside the `to` last sent.
 */
function minutePoller(records: { id: string; at: number }[], start: number) {
  const entry = loadPoller(
    'minutes',
    {
      cron: '* * * * *',
      start_from: new Date(start).toISOString(),
      source: {
        url: 'https://api.example.com/changes',
        from_param: 'from',
        to_param: 'to',
        time_format: JIRA,
        items: 'records',
      },
      deliver: { type: 'handler', name: 'x' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  const config = entry.config;
  let now = start;
  const sentTo: number[] = [];
  const delivered: string[] = [];
  const source = new HttpSource(
    config.source as SourceConfig,
    async (request) => {
      const url = new URL(request.url);
      const from = readMinute(url.searchParams.get('from'));
      const to = readMinute(url.searchParams.get('to'));
      sentTo.push(to);
      const shown = records
        .filter((record) => record.at >= from && record.at < to && record.at <= now)
        .map((record) => ({ id: record.id, updated_at: new Date(record.at).toISOString() }));
      return Response.json({ records: shown });
    },
    [],
    () => now,
  );
  const store = new MemoryStore();
  const context: RunContext = {
    poller: 'minutes',
    config,
    store,
    source,
    deliverer: {
      deliver: async (items) => {
        for (const item of items) delivered.push(item.update.id);
        return { kind: 'delivered' };
      },
    },
    now: () => now,
    random: () => 0.5,
    precision: boundPrecision(config.source.time_format, config.source.time_zone),
  };
  const engine = new PollerEngine(context, { set: async () => {} });
  return {
    delivered,
    sentTo,
    checkpoint: () => store.read().checkpoint,
    runAt: async (time: number) => {
      now = time;
      await engine.runNow('manual');
    },
  };
}

describe('windows sent in whole minutes', () => {
  it('loses no record stamped 10:00:30 when the window ended at 10:00:45: the window ends at the 10:00 it sent', async () => {
    const poller = minutePoller(
      [{ id: 'half-past', at: at('2026-07-01T10:00:30Z') }],
      at('2026-07-01T09:50:00Z'),
    );

    await poller.runAt(at('2026-07-01T10:00:45Z'));
    // The upstream was sent `to = 10:00`, which leaves 10:00:30 out: C stops there, not at T.
    expect(poller.sentTo.map((to) => new Date(to).toISOString())).toEqual([
      '2026-07-01T10:00:00.000Z',
    ]);
    expect(poller.checkpoint()).toBe(at('2026-07-01T10:00:00Z'));
    expect(poller.delivered).toEqual([]);

    await poller.runAt(at('2026-07-01T10:05:10Z'));
    expect(poller.delivered).toEqual(['half-past']);
    expect(poller.checkpoint()).toBe(at('2026-07-01T10:05:00Z'));
  });
});
