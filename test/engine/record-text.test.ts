import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_RECORD_DEPTH,
  readRecord,
  recordToText,
  textDepth,
} from '../../src/poller/record-text.ts';

const nest = (value: unknown, depth: number) => {
  let nested = value;
  for (let i = 0; i < depth; i += 1) nested = i % 2 === 0 ? [nested] : { inner: nested, n: i };
  return nested;
};

describe('records kept as text', () => {
  it('writes any JSON value, however deep, exactly as JSON.stringify does', () => {
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.integer({ min: 0, max: 3 * MAX_RECORD_DEPTH }),
        (value, depth) => {
          const record = nest(value, depth);
          expect(recordToText(record)).toBe(JSON.stringify(record));
        },
      ),
    );
  });

  it('writes a record nested 100,000 levels deep without recursion, and measures its depth', () => {
    const text = recordToText(nest({ a: 'x"[{' }, 100_000));
    expect(text.length).toBeGreaterThan(100_000);
    expect(textDepth(text)).toBe(100_001);
    const read = readRecord(text);
    expect(read.ok).toBe(false);
  });

  it('reads a record within the limits as JSON', () => {
    const record = nest({ s: '[[[[' }, MAX_RECORD_DEPTH - 1);
    expect(readRecord(JSON.stringify(record))).toEqual({ ok: true, record });
  });
});
