import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { PollerConfig } from '../../src/config/schema.ts';
import { nextPathWarnings } from '../../src/poller/next-path-warning.ts';
import { nextPathSighting } from '../../src/sources/paging/index.ts';

/** A valid poller config with this `source.next` (and `source.deletions`, if given). */
function configWith(next: Record<string, unknown>, deletions?: Record<string, unknown>) {
  const entry = loadPoller(
    'p',
    {
      cron: '* * * * *',
      source: {
        url: 'https://api.example.com/items',
        from_param: 'since',
        items: 'items',
        next,
        ...(deletions ? { deletions } : {}),
      },
      deliver: { type: 'handler', name: 'demo-sessions' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  return entry.config;
}

/** What a page with these records and this body tells of the next-page path. */
function sighting(config: PollerConfig, items: unknown[], body: Record<string, unknown>) {
  return nextPathSighting(config.source, {
    url: new URL('https://api.example.com/items'),
    body: { items, ...body },
    headers: new Headers(),
    items,
    cursor: null,
  });
}

const cursorAt = (path: string, more: Record<string, string> = {}) =>
  configWith({ type: 'cursor', param: 'cursor', path, ...more });

describe('what a page shows of the next-page path', () => {
  it('had: on any page, empty or not, null (a last page) included', () => {
    expect(sighting(cursorAt('meta.next'), [], { meta: { next: null } })).toEqual({
      path: 'meta.next',
      present: true,
    });
    expect(sighting(cursorAt('meta.next'), [{ id: 1 }], { meta: { next: 'c2' } })).toEqual({
      path: 'meta.next',
      present: true,
    });
  });

  it('lacked: only on a page with records whose body did not say it was the last', () => {
    expect(sighting(cursorAt('meta.nxt'), [{ id: 1 }], { meta: { next: 'c2' } })).toEqual({
      path: 'meta.nxt',
      present: false,
    });
    expect(sighting(cursorAt('meta.nxt'), [], {})).toBeNull();
    const withMore = cursorAt('meta.nxt', { more: 'has_more' });
    expect(sighting(withMore, [{ id: 1 }], { has_more: false })).toBeNull();
    const withStop = cursorAt('meta.nxt', { stop: 'end_of_stream' });
    expect(sighting(withStop, [{ id: 1 }], { end_of_stream: true })).toBeNull();
  });

  it('nothing, for a style that reads no body path', () => {
    expect(sighting(configWith({ type: 'link' }), [{ id: 1 }], {})).toBeNull();
  });
});

describe('the status warning of a next-page path never had', () => {
  it('names the key it is written under, for the deletions stream too, and only while never had', () => {
    const config = cursorAt('meta.next');
    expect(nextPathWarnings(config, { 'meta.next': 'missed' })).toEqual([
      expect.stringMatching(/^source\.next\.path "meta\.next" was never found in a page's body/),
    ]);
    expect(nextPathWarnings(config, { 'meta.next': 'seen' })).toEqual([]);
    expect(nextPathWarnings(config, { 'meta.other': 'missed' })).toEqual([]);
    const deleting = configWith(
      { type: 'cursor', param: 'cursor', path: 'meta.next' },
      {
        url: 'https://api.example.com/deleted',
        next: { type: 'url', path: 'links.after' },
      },
    );
    expect(nextPathWarnings(deleting, { 'links.after': 'missed' })).toEqual([
      expect.stringMatching(/^source\.deletions\.next\.path "links\.after" was never found/),
    ]);
  });
});
