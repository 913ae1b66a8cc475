import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  DEFAULT_BACKOFF,
  MISCONFIGURED_RETRY,
  retryAt,
} from '../../src/engine/backoff.ts';
import { RunBudget } from '../../src/engine/budget.ts';
import { classifyDeliveryStatus, classifyUpstreamStatus } from '../../src/engine/classify.ts';
import { idempotencyKey } from '../../src/engine/idempotency.ts';
import { decideLease, holdsLease, isExpired, NO_LEASE } from '../../src/engine/lease.ts';

const TTL = 15 * 60_000;

describe('lease decisions (R4, R5, R6)', () => {
  it('acquires a free lease with the next epoch and an expiry of now + lease_ttl', () => {
    const decision = decideLease(NO_LEASE, 1_000, TTL, 'cron');
    expect(decision).toEqual({
      kind: 'acquire',
      recovered: null,
      lease: {
        epoch: 1,
        trigger: 'cron',
        held: true,
        phase: 'acquired',
        startedAt: 1_000,
        expiresAt: 1_000 + TTL,
      },
    });
  });

  it('skips while a live lease is held, however many triggers come', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: TTL - 1 }), (elapsed) => {
        const held = { ...NO_LEASE, epoch: 4, held: true, startedAt: 0, expiresAt: TTL };
        expect(decideLease(held, elapsed, TTL, 'cron')).toEqual({ kind: 'skip', holder: held });
      }),
    );
  });

  it('takes over an expired lease as a recovery with a newer epoch, which fences the old one', () => {
    const held = { ...NO_LEASE, epoch: 4, held: true, startedAt: 0, expiresAt: TTL };
    expect(isExpired(held, TTL)).toBe(true);
    const decision = decideLease(held, TTL, TTL, 'cron');
    expect(decision.kind).toBe('acquire');
    if (decision.kind !== 'acquire') return;
    expect(decision.recovered).toEqual(held);
    expect(decision.lease.epoch).toBe(5);
    expect(holdsLease(decision.lease, 4)).toBe(false);
    expect(holdsLease(decision.lease, 5)).toBe(true);
  });
});

describe('backoff with jitter (R12)', () => {
  it('grows exponentially, stays within [ceiling/2, ceiling], and never exceeds the cap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (failures, r) => {
          const ceiling = Math.min(
            DEFAULT_BACKOFF.cap,
            DEFAULT_BACKOFF.base * 2 ** Math.min(failures - 1, 30),
          );
          const delay = backoffDelay(failures, () => r);
          expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
          expect(delay).toBeLessThanOrEqual(ceiling);
        },
      ),
    );
  });

  it('never books a retry before the upstream’s reset time', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 86_400_000 }),
        (failures, wait) => {
          expect(retryAt(0, failures, 'rate_limited', () => 0.5, wait)).toBeGreaterThanOrEqual(
            wait,
          );
        },
      ),
    );
  });

  it('retries configuration errors slowly', () => {
    expect(retryAt(0, 1, 'misconfigured', () => 0)).toBe(MISCONFIGURED_RETRY);
  });
});

describe('run budget (R7)', () => {
  it('stops on max_run wall time and on the subrequest budget, checked before each request', () => {
    const budget = new RunBudget(0, 1_000, 3);
    expect([budget.take(0), budget.take(10), budget.take(20), budget.take(30)]).toEqual([
      null,
      null,
      null,
      'subrequests',
    ]);
    expect(new RunBudget(0, 1_000, 3).take(1_000)).toBe('max_run');
  });
});

describe('classification (SEMANTICS.md, what each failure gets)', () => {
  it('sorts delivery statuses', () => {
    expect(classifyDeliveryStatus(204, '').kind).toBe('delivered');
    for (const status of [500, 502, 503, 408, 429])
      expect(classifyDeliveryStatus(status, '').kind).toBe('retry');
    for (const status of [400, 409, 422])
      expect(classifyDeliveryStatus(status, '').kind).toBe('rejected');
    for (const status of [401, 403, 404])
      expect(classifyDeliveryStatus(status, '').kind).toBe('misconfigured');
  });

  it('sorts upstream statuses', () => {
    expect(classifyUpstreamStatus(500)).toBe('transient');
    expect(classifyUpstreamStatus(429)).toBe('rate_limited');
    expect(classifyUpstreamStatus(503)).toBe('transient'); // rate limited only with a Retry-After
    for (const status of [401, 403, 404])
      expect(classifyUpstreamStatus(status)).toBe('misconfigured');
  });
});

describe('idempotency keys (R13)', () => {
  it('are <poller>:<id>:<version>', () => {
    expect(idempotencyKey('sessions', '42', '2026-01-01T00:00:00Z')).toBe(
      'sessions:42:2026-01-01T00:00:00Z',
    );
  });
});
