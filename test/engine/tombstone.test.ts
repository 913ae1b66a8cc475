import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { tombstoneRule } from '../../src/sources/tombstone.ts';

/** The source config of a poller whose `source.deleted` is `deleted`, loaded as the Worker would. */
function load(deleted: unknown) {
  return loadPoller(
    'tickets',
    {
      cron: '* * * * *',
      source: { url: 'https://api.example.com/tickets', from_param: 'since', deleted },
      deliver: { type: 'handler', name: 'x' },
    },
    {},
  );
}

function rule(deleted: unknown) {
  const entry = load(deleted);
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  const isDeleted = tombstoneRule(entry.config.source);
  if (isDeleted === null) throw new Error('no rule');
  return isDeleted;
}

describe('source.deleted: which records are tombstones', () => {
  it('with equals, only the exact value at the path (a string, a number or a boolean)', () => {
    const byStatus = rule({ path: 'status', equals: 'deleted' });
    expect(byStatus({ status: 'deleted' })).toBe(true);
    expect(byStatus({ status: 'Deleted' })).toBe(false);
    expect(byStatus({})).toBe(false);
    expect(rule({ path: 'meta.archived', equals: true })({ meta: { archived: true } })).toBe(true);
    expect(rule({ path: 'state', equals: 3 })({ state: '3' })).toBe(false);
  });

  it('without equals, any value at the path but null or false (a deleted_at time)', () => {
    const byTime = rule({ path: 'deleted_at' });
    expect(byTime({ deleted_at: '2026-11-01T00:00:00Z' })).toBe(true);
    expect(byTime({ deleted_at: 1_790_000_000 })).toBe(true);
    expect(byTime({ deleted_at: null })).toBe(false);
    expect(byTime({ archived: true })).toBe(false);
    expect(rule({ path: 'archived' })({ archived: false })).toBe(false);
  });

  it('is no rule at all without source.deleted', () => {
    const entry = load(undefined);
    expect(entry.ok && tombstoneRule(entry.config.source)).toBeNull();
  });

  it('refuses a table without a path, or with a key it does not know', () => {
    const missing = load({ equals: 'deleted' });
    expect(missing.ok ? [] : missing.errors.join('\n')).toContain('source.deleted.path');
    const unknown = load({ path: 'status', value: 'deleted' });
    expect(unknown.ok ? [] : unknown.errors.join('\n')).toContain('source.deleted.value');
  });
});
