import { describe, expect, it } from 'vitest';
import { START, world } from '../support/children-world.ts';

describe('children: a failing parent (deliver_parents) retried on the next window', () => {
  it('is delivered once, not once as a retry and again after its children', async () => {
    const w = world({ children: { deliver_parents: true } });
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    w.tracker.issue('ACME-2');
    w.tracker.comment('ACME-2', 'second');
    // Run 1: ACME-1's child goes out, ACME-1 itself fails (stored, R19); ACME-2's children
    // fail to list, so the window fails and is asked for again.
    w.receiver.failIds.add('ACME-1');
    w.tracker.failComments = { key: 'ACME-2', status: 500 };
    await w.run();
    expect(w.store.read().checkpoint).toBe(START);
    expect(w.shown()).toEqual([`ACME-1/${a} <ACME-1`]);
    // Run 2: all is well again.
    w.receiver.failIds.clear();
    w.tracker.failComments = null;
    await w.run();
    expect(w.store.read().checkpoint).toBeGreaterThan(START);
    expect(w.shown().filter((line) => line === 'ACME-1')).toEqual(['ACME-1']);
  });
});
