import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { IdleLog } from '../../src/engine/idle-log.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { RunContext, Update } from '../../src/engine/ports.ts';

const MINUTE = 60_000;
const START = Date.parse('2026-11-01T00:00:00Z');

/** A poller ticking every minute on a fake clock, its run lines kept. */
function poller(logIdleEvery: string, updatesAt: (minute: number) => Update[]) {
  const entry = loadPoller(
    'quiet',
    {
      every: '1m',
      start_from: new Date(START).toISOString(),
      log_idle_every: logIdleEvery,
      source: { url: 'https://api.test/x', from_param: 'since' },
      deliver: { type: 'webhook', url: 'https://receiver.test/', secret: 'a-secret-for-tests' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  const clock = { now: START, minute: 0 };
  const lines: Record<string, unknown>[] = [];
  const ctx: RunContext = {
    poller: 'quiet',
    config: entry.config,
    store: new MemoryStore(),
    source: {
      async fetchPage() {
        return { ok: true, updates: updatesAt(clock.minute), malformed: [], next: null };
      },
    },
    deliverer: { deliver: async () => ({ kind: 'delivered' }) },
    now: () => clock.now,
    random: () => 0.5,
    log: (line) => lines.push(line),
    idleLog: new IdleLog(entry.config.log_idle_every),
  };
  const engine = new PollerEngine(ctx, { set: async () => {} });
  return {
    lines,
    runNow: (kind: 'manual' | 'startup') => engine.runNow(kind),
    async ticks(count: number) {
      for (let i = 0; i < count; i += 1) {
        await engine.trigger('cron');
        await engine.onAlarm();
        clock.minute += 1;
        clock.now += MINUTE;
      }
    },
  };
}

const runLines = (lines: Record<string, unknown>[]) => lines.filter((line) => line.event === 'run');

describe('run lines that scale (log_idle_every)', () => {
  it('logs a run that found nothing once per log_idle_every, saying how many it stands for', async () => {
    const p = poller('10m', () => []);
    await p.ticks(30);

    const lines = runLines(p.lines);
    expect(lines).toHaveLength(3);
    expect(lines.map((line) => line.idle_runs_not_logged ?? 0)).toEqual([0, 9, 9]);
  });

  it('always logs a run that delivered, whatever came before', async () => {
    const update = (minute: number): Update => {
      const at = START + minute * MINUTE;
      const version = new Date(at).toISOString();
      return { id: `r${minute}`, version, versionMs: at, record: {} };
    };
    const p = poller('10m', (minute) => (minute % 5 === 4 ? [update(minute)] : []));
    await p.ticks(20);

    const delivering = runLines(p.lines).filter((line) => line.records !== 0);
    expect(delivering).toHaveLength(4);
    expect(runLines(p.lines).length).toBeLessThan(20);
  });

  it('always logs a run asked for now, by an operator or by npm start, though it found nothing', async () => {
    const p = poller('10m', () => []);
    await p.ticks(2);
    await p.runNow('startup');
    await p.runNow('manual');
    const lines = runLines(p.lines);
    expect(lines.map((line) => line.trigger)).toEqual(['cron', 'startup', 'manual']);
  });

  it('logs every run with log_idle_every = "0s"', async () => {
    const p = poller('0s', () => []);
    await p.ticks(12);
    expect(runLines(p.lines)).toHaveLength(12);
  });
});
