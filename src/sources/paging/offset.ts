import * as z from 'zod';
import { requiredFor } from '../../config/fields.ts';
import { lastPage, type PagingStyle, positionalProblems } from './style.ts';

/** `param` = the records already read in this window: 0, then + each page's length. */
const config = z.strictObject({
  type: z.literal('offset'),
  /** The query parameter that takes the offset (e.g. "offset", json-server's "_start"). */
  param: requiredFor('next', 'offset'),
  ...lastPage,
});

type OffsetNext = z.output<typeof config>;

/**
 * `offset`: the number of records already read, until an empty page (or `more` false), as
 * APIs with `offset` + `limit` take it. Positional: unsafe over records sorted oldest first.
 */
export const offset = {
  config,
  example: 'next = { type = "offset", param = "offset" }',
  pageUrl(next, windowUrl, at) {
    const url = windowUrl();
    url.searchParams.set(next.param, at ?? '0');
    return url;
  },
  nextPage(_next, page, { missing }) {
    // Only a page whose body said more is coming gets here empty: it cannot move the offset.
    if (page.items.length === 0) return missing('the page is empty, so the offset cannot move on');
    return { ok: true, next: String(Number(page.cursor ?? '0') + page.items.length) };
  },
  problems: positionalProblems('offset', 'offsets'),
} satisfies PagingStyle<OffsetNext>;
