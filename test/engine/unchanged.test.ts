import { describe, expect, it } from 'vitest';
import { contentHash } from '../../src/engine/unchanged.ts';

const ignore = (...paths: string[]) => paths;

describe('the content hash of deliver.changes_only', () => {
  it('does not depend on the order of keys', async () => {
    expect(await contentHash({ a: 1, b: { c: 2, d: 3 } }, [])).toBe(
      await contentHash({ b: { d: 3, c: 2 }, a: 1 }, []),
    );
  });

  it('leaves out the changes_ignore paths, at the top and nested', async () => {
    const before = { id: 1, updated_at: 'a', meta: { etag: 'x', size: 2 }, title: 't' };
    const after = { id: 1, updated_at: 'b', meta: { etag: 'y', size: 2 }, title: 't' };
    expect(await contentHash(before, ignore('updated_at', 'meta.etag'))).toBe(
      await contentHash(after, ignore('updated_at', 'meta.etag')),
    );
    expect(await contentHash(before, ignore('updated_at'))).not.toBe(
      await contentHash(after, ignore('updated_at')),
    );
  });

  it("leaves out a key that holds a dot, as Microsoft Graph's @odata.etag", async () => {
    const before = { id: '1', '@odata.etag': 'W/"1"', fields: { 'x.y': 1, title: 't' } };
    const after = { id: '1', '@odata.etag': 'W/"2"', fields: { 'x.y': 2, title: 't' } };
    expect(await contentHash(before, ignore('@odata.etag', 'fields.x.y'))).toBe(
      await contentHash(after, ignore('@odata.etag', 'fields.x.y')),
    );
    expect(await contentHash(before, ignore('@odata.etag'))).not.toBe(
      await contentHash(after, ignore('@odata.etag')),
    );
  });

  it('leaves out the place a path reads: the longest run of its steps that is a key', async () => {
    const record = (dotted: number, nested: number) => ({
      'a.b': { c: dotted },
      a: { b: { c: nested } },
    });
    // "a.b.c" is the 1 under "a.b", never the 2 under a → b.
    expect(await contentHash(record(1, 2), ignore('a.b.c'))).toBe(
      await contentHash(record(9, 2), ignore('a.b.c')),
    );
    expect(await contentHash(record(1, 2), ignore('a.b.c'))).not.toBe(
      await contentHash(record(1, 9), ignore('a.b.c')),
    );
  });

  it('tells any other change apart, in arrays too', async () => {
    expect(await contentHash({ tags: ['a', 'b'] }, [])).not.toBe(
      await contentHash({ tags: ['b', 'a'] }, []),
    );
    expect(await contentHash({ n: 1 }, [])).not.toBe(await contentHash({ n: '1' }, []));
  });
});
