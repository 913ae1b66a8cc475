import { describe, expect, it } from 'vitest';
import { MINUTE, world } from '../support/children-world.ts';

describe('children: a failing child is tried once per run (R19, max_attempts spans runs)', () => {
  it('retried first on the window, it is not tried again when its parent lists it in the same run', async () => {
    const w = world();
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    w.receiver.failIds.add(`ACME-1/${a}`);
    await w.run();
    const attempts = () => [...w.store.failures.values()][0]?.attempts;
    expect(attempts()).toBe(1);
    // The issue changes (another comment): its listing shows the failing child again.
    w.clock.now += MINUTE;
    w.tracker.comment('ACME-1', 'second');
    await w.run();
    expect(attempts()).toBe(2);
  });
});
