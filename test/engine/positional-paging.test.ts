import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';

/**
 * Paging by position (page numbers, offsets, a cursor that is an offset) loses a record when
 * one changes mid-paging and leaves its place: over records sorted oldest first, or over a
 * window whose end the request sends (the changed record is stamped past it). A config that
 * pages so is refused, saying why and what to do instead.
 */

/** A poller whose source has `source` over a minimal one. */
function poller(source: Record<string, unknown>, rest: Record<string, unknown> = {}) {
  return {
    cron: '*/5 * * * *',
    source: { url: 'https://api.example.com/v1/items', from_param: 'since', ...source },
    deliver: { type: 'handler', name: 'items' },
    ...rest,
  };
}

function errorsOf(raw: unknown): string[] {
  const entry = loadPoller('items', raw, {});
  return entry.ok ? [] : entry.errors;
}

const page = { type: 'page', param: 'page' };
const offset = { type: 'offset', param: 'offset' };
const offsetCursor = { type: 'cursor', param: 'after', path: 'next', positional: true };

describe('positional paging over a bounded window', () => {
  it('refuses numbered pages with to_param, saying why and what to do', () => {
    const errors = errorsOf(poller({ next: page, to_param: 'until' }));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^poller "items": source\.next: numbered pages cannot page a bounded window \(to_param, or \{to\}/,
    );
    expect(errors[0]).toContain('drops out of the results');
    expect(errors[0]).toContain(
      'drop to_param, {to} and max_window and sort newest first (a changed record then moves to the front and is read again), or page with a keyset cursor',
    );
  });

  it('refuses offsets with {to} in the url, params or body', () => {
    const message = 'poller "items": source.next: offsets cannot page a bounded window';
    for (const where of [
      { url: 'https://api.example.com/v1/items?until={to}' },
      { params: { q: 'updated < {to}' } },
      { method: 'POST', body: { filter: { lt: '{to}' } } },
    ]) {
      expect(errorsOf(poller({ next: offset, ...where }))).toEqual([
        expect.stringContaining(message),
      ]);
    }
  });

  it('refuses a cursor declared positional over a bounded window, or sorted oldest first', () => {
    expect(errorsOf(poller({ next: offsetCursor, to_param: 'until' }))).toEqual([
      expect.stringContaining('source.next: offset cursors cannot page a bounded window'),
    ]);
    expect(errorsOf(poller({ next: offsetCursor, sorted: 'asc' }))).toEqual([
      expect.stringContaining(
        'source.sorted: cannot be "asc" with next.positional = true: offset cursors over records sorted oldest first',
      ),
    ]);
  });

  it('refuses offsets in a deletions stream bounded by the to_param it takes from the source', () => {
    const deletions = { url: 'https://api.example.com/v1/deleted', next: offset };
    const errors = errorsOf(
      poller({ next: { type: 'cursor', param: 'c', path: 'c' }, to_param: 'until', deletions }),
    );
    expect(errors).toEqual([
      expect.stringContaining(
        'poller "items": source.deletions.next: offsets cannot page a bounded window',
      ),
    ]);
  });

  it('takes positional paging over an open window, and a keyset cursor over a bounded one', () => {
    expect(errorsOf(poller({ next: page }))).toEqual([]);
    expect(errorsOf(poller({ next: offset }))).toEqual([]);
    expect(errorsOf(poller({ next: offsetCursor }))).toEqual([]);
    const keyset = { type: 'cursor', param: 'after', path: 'next' };
    expect(errorsOf(poller({ next: keyset, to_param: 'until' }, { max_window: '1h' }))).toEqual([]);
  });
});
