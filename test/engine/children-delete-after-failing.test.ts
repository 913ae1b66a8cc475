import { describe, expect, it } from 'vitest';
import { MINUTE, world } from '../support/children-world.ts';

describe('children.deletes: a child still failing when its parent stops listing it', () => {
  it('is deleted after its failing upsert goes out, not left upserted for good', async () => {
    const w = world({ children: { deletes: true } });
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    const b = w.tracker.comment('ACME-1', 'second');
    // Run 1: the receiver refuses b; it is stored as failing (R19), never delivered.
    w.receiver.failIds.add(`ACME-1/${b}`);
    await w.run();
    expect(w.shown()).toEqual([`ACME-1/${a} <ACME-1`]);
    // b is removed upstream (its issue's stamp moves); the receiver still refuses it.
    w.clock.now += MINUTE;
    w.tracker.remove('ACME-1', b);
    await w.run();
    // Then the receiver is back; the issue does not change again.
    w.receiver.failIds.clear();
    await w.run();
    await w.run();
    const ops = w.got.map((item) => `${item.op} ${item.update.id}`);
    // Whatever the receiver got of b, its last word is a delete: b no longer exists.
    expect(ops).toEqual([`upsert ACME-1/${a}`, `upsert ACME-1/${b}`, `delete ACME-1/${b}`]);
    const last = ops.filter((line) => line.endsWith(`ACME-1/${b}`)).at(-1);
    expect(last).toBe(`delete ACME-1/${b}`);
  });
});
