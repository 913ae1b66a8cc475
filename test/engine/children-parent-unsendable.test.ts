import { describe, expect, it } from 'vitest';
import { START, world } from '../support/children-world.ts';

/**
 * A parent whose values cannot make its children's request (a lone surrogate cannot be
 * percent-encoded, a line break cannot be in a header) is a dead letter (R8), as one without
 * the value is: it must not fail every window, run after run, and hold C for good.
 */
describe('children: a parent value no request can carry', () => {
  it('a lone surrogate in a {parent.…} of the URL: a dead letter, and the window commits', async () => {
    const w = world();
    w.tracker.issue('BAD-\ud800');
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    await w.run();
    expect(w.store.read().checkpoint).toBeGreaterThan(START);
    expect(w.store.deadLetters.size).toBe(1);
    expect(w.shown()).toEqual([`ACME-1/${a} <ACME-1`]);
  });

  it('a line break in a {parent.…} of a header: a dead letter, and the window commits', async () => {
    const w = world({ children: { headers: { 'x-issue': '{parent.fields.summary}' } } });
    w.tracker.issue('BAD-1', 'two\r\nlines');
    w.tracker.issue('ACME-1');
    const a = w.tracker.comment('ACME-1', 'first');
    await w.run();
    expect(w.store.runs.at(-1)?.error ?? null).toBeNull();
    expect(w.store.read().checkpoint).toBeGreaterThan(START);
    expect(w.store.deadLetters.size).toBe(1);
    expect(w.shown()).toEqual([`ACME-1/${a} <ACME-1`]);
  });
});
