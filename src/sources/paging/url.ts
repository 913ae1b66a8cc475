import * as z from 'zod';
import { requiredFor } from '../../config/fields.ts';
import { readPath } from '../dot-path.ts';
import { bodyPath, bodyPathProblems, lastPage, type PagingStyle, shown, WINDOW } from './style.ts';

/** The body path `path` holds the next URL, absolute or relative. */
const config = z.strictObject({
  type: z.literal('url'),
  /** Body path of the next page's URL. */
  path: bodyPath(requiredFor('next', 'url')),
  ...lastPage,
});

type UrlNext = z.output<typeof config>;

/** `url`: the body carries the next page's URL, followed as it is (Zendesk `next_page`). */
export const url = {
  config,
  example: 'next = { type = "url", path = "next_page", stop = "end_of_stream" }',
  step(_next, at) {
    return at === null ? WINDOW : { kind: 'follow', url: at };
  },
  nextPage(next, page, { missing, follow }) {
    const value = readPath(page.body, next.path);
    if (typeof value !== 'string' || value === '') {
      return missing(`the next page URL at "${next.path}" is ${shown(value)}`);
    }
    return follow(value);
  },
  problems(next, source) {
    return bodyPathProblems(next.path, source, "the next page's URL");
  },
} satisfies PagingStyle<UrlNext>;
