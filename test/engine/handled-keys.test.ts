import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Handled, HandledKeys } from '../../src/engine/window-memory.ts';

/**
 * What HandledKeys promises, kept naively: every key handled at or above `keepFrom` for the
 * whole window; the others for the pages of the current generation of 4 and the one before.
 */
class Reference {
  private readonly whole = new Set<string>();
  private generations: Handled[][][] = [[], []];

  constructor(private readonly keepFrom: number) {}

  addPage(handled: readonly Handled[]): void {
    if ((this.generations[0] as Handled[][]).length === 4) {
      this.generations = [[], this.generations[0] as Handled[][]];
    }
    (this.generations[0] as Handled[][]).push([...handled]);
    for (const { key, keep } of handled) if (keep >= this.keepFrom) this.whole.add(key);
  }

  has(key: string, versionMs: number): boolean {
    if (this.whole.has(key)) return true;
    return this.generations.some((pages) =>
      pages.some((page) => page.some((h) => h.key === key && h.keep === versionMs)),
    );
  }
}

const KEEP_FROM = 50;
const handledOf = fc.record({
  key: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
  keep: fc.oneof(fc.integer({ min: 0, max: 60 }), fc.constant(Number.POSITIVE_INFINITY)),
});
const step = fc.oneof(
  fc.record({ page: fc.array(handledOf, { maxLength: 6 }) }),
  fc.record({
    ask: fc.record({ key: handledOf.map((h) => h.key), at: fc.integer({ min: 0, max: 60 }) }),
  }),
);

describe('the keys a window knows as handled', () => {
  it('answers as if every page were indexed as it came, in any order of pages and questions', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const seen = new HandledKeys(new Set(['z']), KEEP_FROM);
        const reference = new Reference(KEEP_FROM);
        for (const s of steps) {
          if ('page' in s) {
            seen.addPage(s.page);
            reference.addPage(s.page);
          } else {
            expect(seen.has(s.ask.key, s.ask.at)).toBe(reference.has(s.ask.key, s.ask.at));
          }
        }
        expect(seen.has('z', 0)).toBe(true); // the ledger loaded at the window's start
      }),
      { numRuns: 2_000 },
    );
  });

  it('forgets a page once two generations of newer pages have come', () => {
    const seen = new HandledKeys(new Set(), KEEP_FROM);
    seen.addPage([{ key: 'old', keep: 10 }]);
    expect(seen.has('old', 10)).toBe(true);
    for (let page = 0; page < 8; page += 1) seen.addPage([{ key: `p${page}`, keep: 20 + page }]);
    expect(seen.has('old', 10)).toBe(false);
    expect(seen.has('p7', 27)).toBe(true);
  });
});
