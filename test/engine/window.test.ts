import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasBacklog, nextCheckpoint, planWindow, stepPrecision } from '../../src/engine/window.ts';

const time = fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 });
const span = fc.integer({ min: 0, max: 7 * 86_400_000 });

describe('planWindow', () => {
  it('starts overlap before C, ends at T, or at from + max_window for a bounded source', () => {
    fc.assert(
      fc.property(
        time,
        span,
        span,
        fc.option(fc.integer({ min: 1, max: 86_400_000 })),
        fc.boolean(),
        (c, overlap, ahead, maxWindow, bounded) => {
          const now = c + ahead;
          const window = planWindow({
            checkpoint: c,
            overlap,
            maxWindow: maxWindow ?? undefined,
            bounded,
            now,
          });
          expect(window.from).toBe(c - overlap);
          expect(window.to).toBeLessThanOrEqual(Math.max(now, window.from));
          expect(window.startedAt).toBe(now);
          if (bounded && maxWindow !== null)
            expect(window.to - window.from).toBeLessThanOrEqual(maxWindow);
          else expect(window.to).toBe(now);
        },
      ),
    );
  });
});

describe('R1: nextCheckpoint', () => {
  it('never passes T − lag_allowance nor the window end, and never moves backwards', () => {
    fc.assert(
      fc.property(time, span, span, span, (c, ahead, lag, length) => {
        const now = c + ahead;
        const window = planWindow({
          checkpoint: c,
          overlap: 0,
          maxWindow: length || undefined,
          bounded: true,
          now,
        });
        const next = nextCheckpoint(c, window, lag);
        expect(next).toBeGreaterThanOrEqual(c);
        if (next > c) {
          expect(next).toBeLessThanOrEqual(now - lag);
          expect(next).toBeLessThanOrEqual(window.to);
        }
      }),
    );
  });

  it('is exactly the start time T for an open window with lag_allowance 0', () => {
    fc.assert(
      fc.property(time, span, (c, ahead) => {
        const window = planWindow({
          checkpoint: c,
          overlap: 0,
          maxWindow: undefined,
          bounded: false,
          now: c + ahead,
        });
        expect(nextCheckpoint(c, window, 0)).toBe(c + ahead);
      }),
    );
  });

  it('asks for another window only when a bounded window ended before T and C moved', () => {
    const window = planWindow({
      checkpoint: 0,
      overlap: 0,
      maxWindow: 10,
      bounded: true,
      now: 100,
    });
    expect(hasBacklog(window, 0, 10)).toBe(true);
    expect(hasBacklog(window, 10, 10)).toBe(false);
    const open = planWindow({
      checkpoint: 0,
      overlap: 0,
      maxWindow: undefined,
      bounded: false,
      now: 100,
    });
    expect(hasBacklog(open, 0, 100)).toBe(false);
  });
});

describe('hasBacklog with whole-second bounds', () => {
  it('sees no backlog in a caught-up window whose end was floored to the second', () => {
    fc.assert(
      fc.property(
        time,
        fc.integer({ min: 0, max: 5_000 }),
        fc.integer({ min: 0, max: 2_000 }),
        (now, behind, lag) => {
          const checkpoint = now - behind;
          const window = planWindow({
            checkpoint,
            overlap: 0,
            maxWindow: 3_600_000,
            bounded: true,
            now,
            precision: stepPrecision(1000),
          });
          expect(window.to % 1000 === 0 || window.to === window.from).toBe(true);
          expect(window.to).toBeLessThanOrEqual(now);
          expect(hasBacklog(window, checkpoint, nextCheckpoint(checkpoint, window, lag))).toBe(
            false,
          );
        },
      ),
    );
  });
});
