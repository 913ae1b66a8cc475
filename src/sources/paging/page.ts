import * as z from 'zod';
import { requiredFor } from '../../config/fields.ts';
import { lastPage, type PagingStyle, positionalProblems } from './style.ts';

/** `param` = 1, 2, 3… until an empty page. */
const config = z.strictObject({
  type: z.literal('page'),
  /** The query parameter that takes the page number. */
  param: requiredFor('next', 'page'),
  ...lastPage,
});

type PageNext = z.output<typeof config>;

/** `page`: numbered pages from 1, until an empty one. Positional: unsafe sorted oldest first. */
export const page = {
  config,
  example: 'next = { type = "page", param = "page" }',
  pageUrl(next, windowUrl, at) {
    const url = windowUrl();
    url.searchParams.set(next.param, at ?? '1');
    return url;
  },
  nextPage(_next, read) {
    return { ok: true, next: String(Number(read.cursor ?? '1') + 1) };
  },
  problems: positionalProblems('page', 'numbered pages'),
} satisfies PagingStyle<PageNext>;
