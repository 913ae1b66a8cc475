import type { SourceConfig } from '../config/schema.ts';
import type { Window } from '../engine/window.ts';
import { readPath } from './dot-path.ts';
import { nextLink } from './link-header.ts';
import { formatTime } from './time.ts';

/**
 * What a page said about the next one. A page that says more is coming but not where it is
 * a bad response (retried, C unchanged): taking it as the last page would lose the rest.
 */
export type NextPage =
  | { ok: true; next: string | null }
  | { ok: false; kind: 'misconfigured' | 'bad_response'; error: string };

/**
 * The URL of a page. The first page is `url` + `params` + the window; `url` and `link`
 * paging then follow the upstream's own next URL as it is; `cursor`, `page` and `last_id`
 * add their parameter to the first page's URL. Throws on a next URL that does not parse
 * (the source reports it as a bad response). `windowHref` is `windowUrl(config, window)`,
 * when the caller keeps it for the window's pages.
 */
export function pageUrl(
  config: SourceConfig,
  window: Window,
  cursor: string | null,
  windowHref?: string,
): URL {
  const { next } = config;
  if (cursor !== null && (next.type === 'url' || next.type === 'link')) return new URL(cursor);
  const url = windowHref === undefined ? windowUrl(config, window) : new URL(windowHref);
  if (next.type === 'page') url.searchParams.set(next.param, cursor ?? '1');
  else if ((next.type === 'cursor' || next.type === 'last_id') && cursor !== null) {
    url.searchParams.set(next.param, cursor);
  }
  return url;
}

/** `url` + `params` + the window's bounds: what every page of a window starts from. */
export function windowUrl(config: SourceConfig, window: Window): URL {
  const url = new URL(config.url);
  for (const [key, value] of Object.entries(config.params)) url.searchParams.set(key, value);
  url.searchParams.set(config.from_param, formatTime(window.from, config.time_format));
  if (config.to_param !== undefined && window.bounded) {
    url.searchParams.set(config.to_param, formatTime(window.to, config.time_format));
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
  const stop = next.stop === undefined ? undefined : readPath(page.body, next.stop);
  const more = next.more === undefined ? undefined : readPath(page.body, next.more);
  if (stop === true || more === false) return done;
  // The body says in so many words that more is coming: then a missing way to it is an
  // error, and an empty page is not the end (some APIs send empty pages mid-stream).
  const saysMore = more === true || stop === false;
  const said = saysMore
    ? `${next.more !== undefined && more === true ? `"${next.more}" is true` : `"${next.stop}" is false`}`
    : '';
  const missing = (what: string): NextPage =>
    saysMore
      ? {
          ok: false,
          kind: 'bad_response',
          error: `${said} but ${what}: the rest of the window cannot be fetched`,
        }
      : done;
  const empty = page.items.length === 0 && !saysMore;
  if (empty) return done;
  switch (next.type) {
    case 'cursor': {
      const value = readPath(page.body, next.path);
      if (typeof value === 'number') return { ok: true, next: String(value) };
      if (typeof value === 'string' && value !== '') return { ok: true, next: value };
      return missing(`the next cursor at "${next.path}" is ${shown(value)}`);
    }
    case 'url': {
      const value = readPath(page.body, next.path);
      if (typeof value !== 'string' || value === '') {
        return missing(`the next page URL at "${next.path}" is ${shown(value)}`);
      }
      return sameOrigin(config, value, page.url);
    }
    case 'link': {
      const target = nextLink(page.headers.get('link'));
      if (target === null) return missing('the Link header has no rel="next"');
      return sameOrigin(config, target, page.url);
    }
    case 'page':
      return { ok: true, next: String(Number(page.cursor ?? '1') + 1) };
    case 'last_id': {
      const last = page.items.at(-1);
      const id = last === undefined ? undefined : readPath(last, config.id);
      if (typeof id === 'number' || (typeof id === 'string' && id !== '')) {
        return { ok: true, next: String(id) };
      }
      return missing(
        last === undefined
          ? 'the page has no records to take the last id from'
          : `the last record's id at "${config.id}" is ${shown(id)}`,
      );
    }
  }
}

function shown(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/** Credentials go to source.url's origin only: a next page elsewhere is refused, not followed. */
function sameOrigin(config: SourceConfig, target: string, base: URL): NextPage {
  let next: URL;
  try {
    next = new URL(target, base);
  } catch {
    return {
      ok: false,
      kind: 'bad_response',
      error: `the next page URL ${shown(target)} does not parse`,
    };
  }
  const origin = new URL(config.url).origin;
  if (next.origin !== origin) {
    return {
      ok: false,
      kind: 'misconfigured',
      error: `refused to follow the next page to ${next.origin}: it is not source.url's origin (${origin}), and the request headers must not leave it`,
    };
  }
  return { ok: true, next: next.toString() };
}
