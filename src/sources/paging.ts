import type { SourceConfig } from '../config/schema.ts';
import type { Window } from '../engine/window.ts';
import { readPath } from './dot-path.ts';
import { nextLink } from './link-header.ts';
import { formatTime } from './time.ts';

/** What a page said about the next one. */
export type NextPage = { ok: true; next: string | null } | { ok: false; error: string };

/**
 * The URL of a page. The first page is `url` + `params` + the window; `url` and `link`
 * paging then follow the upstream's own next URL as it is; `cursor`, `page` and `last_id`
 * add their parameter to the first page's URL.
 */
export function pageUrl(config: SourceConfig, window: Window, cursor: string | null): URL {
  const { next } = config;
  if (cursor !== null && (next.type === 'url' || next.type === 'link')) return new URL(cursor);
  const url = new URL(config.url);
  for (const [key, value] of Object.entries(config.params)) url.searchParams.set(key, value);
  url.searchParams.set(config.from_param, formatTime(window.from, config.time_format));
  if (config.to_param !== undefined && window.bounded) {
    url.searchParams.set(config.to_param, formatTime(window.to, config.time_format));
  }
  if (next.param !== undefined) {
    if (next.type === 'page') url.searchParams.set(next.param, cursor ?? '1');
    else if (cursor !== null) url.searchParams.set(next.param, cursor);
  }
  return url;
}

/** Reads where the next page is, or null when this page was the last of the window. */
export function nextPage(
  config: SourceConfig,
  page: { url: URL; body: unknown; headers: Headers; items: unknown[]; cursor: string | null },
): NextPage {
  const { next } = config;
  const done = { ok: true, next: null } as const;
  if (next.type === 'none') return done;
  if (next.stop !== undefined && readPath(page.body, next.stop) === true) return done;
  if (next.more !== undefined && readPath(page.body, next.more) === false) return done;
  // An empty page ends the window (never page forever on an empty stream) unless the body
  // says in so many words that more is coming: some APIs send empty pages mid-stream.
  const saysMore =
    (next.more !== undefined && readPath(page.body, next.more) === true) ||
    (next.stop !== undefined && readPath(page.body, next.stop) === false);
  const empty = page.items.length === 0 && !saysMore;
  switch (next.type) {
    case 'cursor': {
      const value = readPath(page.body, next.path ?? '');
      if (empty) return done;
      if (typeof value === 'number') return { ok: true, next: String(value) };
      return { ok: true, next: typeof value === 'string' && value !== '' ? value : null };
    }
    case 'url': {
      const value = readPath(page.body, next.path ?? '');
      if (empty || typeof value !== 'string' || value === '') return done;
      return sameOrigin(config, new URL(value, page.url));
    }
    case 'link': {
      const target = nextLink(page.headers.get('link'));
      return target === null || empty ? done : sameOrigin(config, new URL(target, page.url));
    }
    case 'page':
      return page.items.length === 0
        ? done
        : { ok: true, next: String(Number(page.cursor ?? '1') + 1) };
    case 'last_id': {
      const last = page.items.at(-1);
      const id = last === undefined ? undefined : readPath(last, config.id);
      if (typeof id !== 'string' && typeof id !== 'number') return done;
      return { ok: true, next: String(id) };
    }
  }
}

/** Credentials go to source.url's origin only: a next page elsewhere is refused, not followed. */
function sameOrigin(config: SourceConfig, next: URL): NextPage {
  const origin = new URL(config.url).origin;
  if (next.origin !== origin) {
    return {
      ok: false,
      error: `refused to follow the next page to ${next.origin}: it is not source.url's origin (${origin}), and the request headers must not leave it`,
    };
  }
  return { ok: true, next: next.toString() };
}
