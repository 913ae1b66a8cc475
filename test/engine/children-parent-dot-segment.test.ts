import { describe, expect, it } from 'vitest';
import { START, world } from '../support/children-world.ts';

describe('children: a {parent.…} value never chooses which path is asked for', () => {
  for (const key of ['..', '.']) {
    it(`a parent whose value is "${key}" is a dead letter; no request leaves its path`, async () => {
      const w = world();
      w.tracker.issue(key);
      w.tracker.issue('ACME-1');
      const a = w.tracker.comment('ACME-1', 'first');
      await w.run();
      // Every request is the search or an issue's comments: "/issue/../comment" would be
      // "/comment", "/issue/./comment" "/issue/comment" (another endpoint, with the
      // source's credentials).
      const paths = w.tracker.requests.map((url) => url.pathname);
      expect(
        paths.filter((path) => path !== '/search' && !/^\/issue\/[^/]+\/comment$/.test(path)),
      ).toEqual([]);
      const letters = [...w.store.deadLetters.values()];
      expect(letters).toHaveLength(1);
      expect(letters[0]?.error).toContain('which path');
      expect(w.shown()).toEqual([`ACME-1/${a} <ACME-1`]);
      expect(w.store.read().checkpoint).toBeGreaterThan(START);
    });
  }
});
