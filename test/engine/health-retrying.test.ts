import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import type { RunRecord } from '../../src/engine/ports.ts';
import { alertsOf, type HealthInput, healthOf, retryingWarning } from '../../src/poller/health.ts';

const MINUTE = 60_000;
const NOW = Date.parse('2026-06-01T12:00:00Z');

function config() {
  const entry = loadPoller(
    'flaky',
    {
      every: '1m',
      alert_after: '30m',
      source: { url: 'https://api.test/x', from_param: 'since' },
      deliver: { type: 'handler', name: 'flaky' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  return entry.config;
}

/** After a `partial` run: C just moved, a retry booked, `count` updates failing since `since`. */
function afterPartialRun(count: number, since: number): HealthInput {
  const state = {
    ...new MemoryStore().read(),
    checkpoint: NOW - MINUTE,
    failures: 1,
    wakeup: { at: NOW + 5_000, reason: 'retry' as const, failure: 'transient' as const },
  };
  const lastRun: RunRecord = {
    epoch: 3,
    trigger: 'cron',
    outcome: 'partial',
    startedAt: NOW - MINUTE,
    finishedAt: NOW - MINUTE + 2_000,
    windows: 1,
    pages: 1,
    records: 40,
    deadLettered: 0,
    error: 'poller "flaky": 2 update(s) failing, stored and retried by the next run',
    checkpoint: NOW - MINUTE,
  };
  const input: HealthInput = {
    configErrors: [],
    state,
    config: config(),
    firstSeenAt: null,
    lastRun,
    warnings: [],
    now: NOW,
    retrying: { count, oldestSince: since },
  };
  const warning = retryingWarning(input.retrying, input.config, NOW);
  return { ...input, warnings: warning === null ? [] : [warning] };
}

describe('health while updates are retrying (R19)', () => {
  it('a partial run with young failing updates is a warning that says how many and since when, with no alert', () => {
    const input = afterPartialRun(2, NOW - 5 * MINUTE);
    expect(healthOf(input)).toBe('warning');
    expect(input.warnings).toEqual([
      '2 updates retrying, oldest since 2026-06-01T11:55:00.000Z: the receiver failed them; they are stored and retried first by every run',
    ]);
    expect(alertsOf(input)).toEqual([]);
  });

  it('an update failing for longer than alert_after makes the poller lagging, with an alert for /healthz', () => {
    const input = afterPartialRun(1, NOW - 31 * MINUTE);
    expect(healthOf(input)).toBe('lagging');
    expect(input.warnings).toEqual([]);
    expect(alertsOf(input)).toEqual([
      'lagging: 1 update retrying, the oldest failing since 2026-06-01T11:29:00.000Z, more than alert_after (30m) ago',
    ]);
  });

  it('three partial runs in a row are not "3 failed runs in a row"', () => {
    const input = afterPartialRun(2, NOW - 5 * MINUTE);
    const state = { ...input.state, failures: 3 };
    expect(alertsOf({ ...input, state })).toEqual([]);
    expect(healthOf({ ...input, state })).toBe('warning');
  });
});
