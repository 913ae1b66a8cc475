import { describe, expect, it } from 'vitest';
import { contentHash } from '../../src/engine/unchanged.ts';

const ignore = (...paths: string[]) => paths.map((path) => path.split('.'));

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

  it('tells any other change apart, in arrays too', async () => {
    expect(await contentHash({ tags: ['a', 'b'] }, [])).not.toBe(
      await contentHash({ tags: ['b', 'a'] }, []),
    );
    expect(await contentHash({ n: 1 }, [])).not.toBe(await contentHash({ n: '1' }, []));
  });
});
