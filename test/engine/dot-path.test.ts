import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_KEY_STEPS, readPath } from '../../src/sources/dot-path.ts';

describe('a dot path', () => {
  it('reads nested keys, and "" is the value itself', () => {
    const body = { meta: { next: 'c2', pages: [{ id: 7 }] }, n: 0 };
    expect(readPath(body, 'meta.next')).toBe('c2');
    expect(readPath(body, 'meta.pages.0.id')).toBe(7);
    expect(readPath(body, 'n')).toBe(0);
    expect(readPath(body, '')).toBe(body);
    expect(readPath(body, 'meta.nope')).toBeUndefined();
    expect(readPath(body, 'n.deeper')).toBeUndefined();
    expect(readPath('text', 'a.b')).toBeUndefined();
  });

  it("reaches a key that holds a dot, with no escaping: Microsoft Graph's @odata.nextLink", () => {
    const page = { value: [], '@odata.nextLink': 'https://graph.test/v1.0/items?$skiptoken=x' };
    expect(readPath(page, '@odata.nextLink')).toBe('https://graph.test/v1.0/items?$skiptoken=x');
    expect(readPath({ d: { 'odata.next': 'n', x: 1 } }, 'd.odata.next')).toBe('n');
    expect(readPath({ 'a.b': { c: { 'd.e': 5 } } }, 'a.b.c.d.e')).toBe(5);
    // A key that starts with a dot (Dropbox's ".tag") is a run that begins with an empty step.
    expect(readPath({ entry: { '.tag': 'deleted' } }, 'entry..tag')).toBe('deleted');
  });

  it('takes, at each level, the longest run of the remaining steps that is a key', () => {
    const both = { 'a.b': { c: 1 }, a: { b: { c: 2 } } };
    expect(readPath(both, 'a.b.c')).toBe(1);
    // No backtracking: once "a.b" matched, a path it cannot finish reads nothing.
    expect(readPath({ 'a.b': { x: 1 }, a: { b: { c: 2 } } }, 'a.b.c')).toBeUndefined();
    // A shorter run is taken when no longer one is a key.
    expect(readPath({ a: { 'b.c': 3 }, 'a.x': 0 }, 'a.b.c')).toBe(3);
  });

  it('spans at most MAX_KEY_STEPS steps with one key, so a path of 10,000 steps stays cheap', () => {
    const long = Array.from({ length: MAX_KEY_STEPS }, (_, i) => `k${i}`).join('.');
    expect(readPath({ [long]: 1 }, long)).toBe(1);
    expect(readPath({ [`${long}.x`]: 1 }, `${long}.x`)).toBeUndefined();
    const steps = Array.from({ length: 10_000 }, (_, i) => `s${i}`);
    const deep = steps.reduceRight<unknown>((inner, step) => ({ [step]: inner }), 'bottom');
    expect(readPath(deep, steps.join('.'))).toBe('bottom');
  });

  /** Keys that may hold dots anywhere, a leading or trailing one included. */
  const key = fc.string({ unit: fc.constantFrom('a', 'b', '.', '@'), minLength: 1, maxLength: 4 });
  /** Every run of `steps` from the first that is longer than `size` steps, joined. */
  const longerRuns = (steps: string[], size: number) =>
    steps.slice(size).map((_, extra) => steps.slice(0, size + extra + 1).join('.'));

  it('reaches the value at the end of any chain of keys made into a path, when no longer run of it is a key of a level', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ key, siblings: fc.array(key, { maxLength: 3 }) }), {
          minLength: 1,
          maxLength: 4,
        }),
        (levels) => {
          const leaf = { reached: true };
          let value: unknown = leaf;
          for (const { key: own, siblings } of [...levels].reverse()) {
            const level: Record<string, unknown> = {};
            for (const sibling of siblings) level[sibling] = { sibling: true };
            level[own] = value;
            value = level;
          }
          // The precondition: at each level, no sibling is a longer run of what remains.
          levels.forEach(({ key: own, siblings }, at) => {
            const rest = levels
              .slice(at)
              .map((level) => level.key)
              .join('.')
              .split('.');
            const longer = longerRuns(rest, own.split('.').length);
            fc.pre(!siblings.some((sibling) => longer.includes(sibling)));
          });
          const path = levels.map((level) => level.key).join('.');
          expect(readPath(value, path)).toBe(leaf);
        },
      ),
      { numRuns: 500 },
    );
  });
});
