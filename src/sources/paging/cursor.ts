import * as z from 'zod';
import { requiredFor } from '../../config/fields.ts';
import { readPath } from '../dot-path.ts';
import { bodyPath, bodyPathProblems, lastPage, type PagingStyle, shown } from './style.ts';

/** The body path `path` holds an opaque cursor, sent back as `param`. */
const config = z.strictObject({
  type: z.literal('cursor'),
  /** The query parameter that takes the cursor. */
  param: requiredFor('next', 'cursor'),
  /** Body path of the next cursor (a string or a number). */
  path: bodyPath(requiredFor('next', 'cursor')),
  ...lastPage,
});

type CursorNext = z.output<typeof config>;

/** `cursor`: an opaque cursor in the body, sent back as a query parameter (keyset: order-safe). */
export const cursor = {
  config,
  example: 'next = { type = "cursor", param = "cursor", path = "next_cursor" }',
  pageUrl(next, windowUrl, at) {
    const url = windowUrl();
    if (at !== null) url.searchParams.set(next.param, at);
    return url;
  },
  nextPage(next, page, { missing }) {
    const value = readPath(page.body, next.path);
    if (typeof value === 'number') return { ok: true, next: String(value) };
    if (typeof value === 'string' && value !== '') return { ok: true, next: value };
    return missing(`the next cursor at "${next.path}" is ${shown(value)}`);
  },
  problems(next, source) {
    return bodyPathProblems(next.path, source, 'the next cursor');
  },
} satisfies PagingStyle<CursorNext>;
