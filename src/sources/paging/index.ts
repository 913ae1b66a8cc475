import * as z from 'zod';
import type { SourceConfig } from '../../config/schema.ts';
import { readPath } from '../dot-path.ts';
import { cursor } from './cursor.ts';
import { lastId } from './last-id.ts';
import { link } from './link.ts';
import { none } from './none.ts';
import { offset } from './offset.ts';
import { page } from './page.ts';
import {
  arrayBodyWarning,
  DONE,
  type NextPage,
  type NextTools,
  type PageStep,
  type PagingStyle,
  type ReadPage,
  type SourceProblem,
  type SourceShape,
  shown,
} from './style.ts';
import { url } from './url.ts';

export type { NextPage, NextPathMemo, PageStep, PagingStyle, ReadPage } from './style.ts';

/** Every paging style, by its `source.next.type`. A new style is a module and a line here. */
const styles = { cursor, url, link, page, last_id: lastId, offset, none };

/** A `source.next.type`. */
export type NextType = keyof typeof styles;

/** The styles, each checked against the interface and against the name it is registered under. */
export const pagingStyles = styles satisfies { [K in NextType]: PagingStyle<{ type: K }> };

type StyleConfig = (typeof pagingStyles)[NextType]['config'];

/**
 * How to reach the next page of the same window, one shape per `type` (each style's own
 * table): a key that does not apply to the chosen type is an error, never silently ignored.
 */
export const nextSchema = z.discriminatedUnion(
  'type',
  Object.values(pagingStyles).map((style) => style.config) as [StyleConfig, ...StyleConfig[]],
);

/** A `source.next` table, parsed. */
export type NextConfig = z.output<typeof nextSchema>;

/** The style a `source.next` table asks for. */
function styleOf(next: NextConfig): PagingStyle<NextConfig> {
  return pagingStyles[next.type];
}

/** What the paging style cannot work with in the rest of `source`, at paths under it. */
export function pagingProblems(source: SourceShape & { next: NextConfig }): SourceProblem[] {
  return styleOf(source.next).problems(source.next, source);
}

/**
 * What npm run check-config warns of in a valid source's paging: a next-page body path read
 * from a body that is the array of records (see arrayBodyWarning), for the main stream and
 * the deletions stream, each line led by the key it is about.
 */
export function nextPathWarnings(source: SourceConfig): string[] {
  const streams = [{ key: 'source', next: source.next, items: source.items }];
  const { deletions } = source;
  if (deletions !== undefined) {
    const next = deletions.next ?? source.next;
    streams.push({ key: 'source.deletions', next, items: deletions.items ?? source.items });
  }
  return streams.flatMap(({ key, next, items }) => {
    if (next.type !== 'cursor' && next.type !== 'url') return [];
    const what = next.type === 'url' ? "the next page's URL" : 'the next cursor';
    const warning = arrayBodyWarning(next.path, { items }, what);
    return warning === null ? [] : [`${key}.next.path: ${warning}`];
  });
}

/**
 * What the page `cursor` names asks for beyond its window's request (sources/request/build.ts
 * turns it into the request): the style's value, where `next.in` says, or a next URL.
 */
export function pageStep(next: NextConfig, cursor: string | null): PageStep {
  return styleOf(next).step(next, cursor);
}

/**
 * Reads where the next page is, or null when this page was the last of the window. Every
 * style stops on `stop` being true, `more` being false, and an empty page unless the body
 * says more is coming; the style finds the way on from the rest.
 */
export function nextPage(config: SourceConfig, page: ReadPage): NextPage {
  const { next } = config;
  const stopPath = 'stop' in next ? next.stop : undefined;
  const morePath = 'more' in next ? next.more : undefined;
  const stop = stopPath === undefined ? undefined : readPath(page.body, stopPath);
  const more = morePath === undefined ? undefined : readPath(page.body, morePath);
  if (stop === true || more === false) return DONE;
  // The body says in so many words that more is coming: then a missing way to it is an
  // error, and an empty page is not the end (some APIs send empty pages mid-stream).
  const saysMore = more === true || stop === false;
  if (page.items.length === 0 && !saysMore) return DONE;
  const said = more === true ? `"${morePath}" is true` : `"${stopPath}" is false`;
  const tools: NextTools = {
    missing: (what) =>
      saysMore
        ? {
            ok: false,
            kind: 'bad_response',
            error: `${said} but ${what}: the rest of the window cannot be fetched`,
          }
        : DONE,
    follow: (target) => sameOrigin(config, target, page.url),
    id: config.id,
  };
  return styleOf(next).nextPage(next, page, tools);
}

/**
 * What a page showed of the body path the next page is read from (`next.path` of a cursor or
 * url style), for the poller's memo (NextPathMemo): `present` when the path is in the body
 * (null too: a last page's "no more"); absent, only on a page with records whose body did not
 * say in so many words that it was the last (`stop`, `more`), which is how a misspelt path
 * looks: every window ends at its first page. Null when the page tells nothing of it.
 */
export function nextPathSighting(
  config: SourceConfig,
  page: ReadPage,
): { path: string; present: boolean } | null {
  const { next } = config;
  if (next.type !== 'cursor' && next.type !== 'url') return null;
  if (readPath(page.body, next.path) !== undefined) return { path: next.path, present: true };
  if (page.items.length === 0) return null;
  const said =
    (next.stop !== undefined && readPath(page.body, next.stop) === true) ||
    (next.more !== undefined && readPath(page.body, next.more) === false);
  return said ? null : { path: next.path, present: false };
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
