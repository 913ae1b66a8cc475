import type { PollerConfig } from '../config/schema.ts';
import type { NextConfig } from '../sources/paging/index.ts';
import type { PathSighting } from './store/index.ts';

/** The next-page body paths a config reads, by the key that names each. */
function nextPathsOf(config: PollerConfig): { key: string; path: string }[] {
  const tables: [string, NextConfig | undefined][] = [
    ['source.next', config.source.next],
    ['source.deletions.next', config.source.deletions?.next],
    ['reconcile.next', config.reconcile?.next],
  ];
  return tables.flatMap(([key, next]) =>
    next?.type === 'cursor' || next?.type === 'url'
      ? [{ key: `${key}.path`, path: next.path }]
      : [],
  );
}

/**
 * A next-page body path a page with records lacked, that no page of this poller ever had:
 * a warning, not a failure (a window of one page is normal), since a misspelt path reads as
 * "no next page" and cuts every window to its first page while the checkpoint moves past
 * the rest. Gone once any page has the path (see store/next-paths.ts).
 */
export function nextPathWarnings(
  config: PollerConfig | undefined,
  sightings: Readonly<Record<string, PathSighting>> | undefined,
): string[] {
  if (config === undefined || sightings === undefined) return [];
  return nextPathsOf(config)
    .filter(({ path }) => sightings[path] === 'missed')
    .map(
      ({ key, path }) =>
        `${key} "${path}" was never found in a page's body: each page with records that lacked it was taken as the last of its window, so if it is misspelt, every window stops at its first page and the checkpoint moves past the rest. Check it against the upstream's response, or set next.more or next.stop, which say for sure when a page is the last`,
    );
}
