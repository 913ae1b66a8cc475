import * as z from 'zod';
import { nextLink } from '../link-header.ts';
import { lastPage, noProblems, type PagingStyle, WINDOW } from './style.ts';

/** An RFC 8288 Link header with rel="next". */
const config = z.strictObject({ type: z.literal('link'), ...lastPage });

type LinkNext = z.output<typeof config>;

/**
 * `link`: the `Link` header's `rel="next"` URL, followed as it is (GitHub). Its links may be
 * page numbers, which are unsafe over records sorted oldest first, but nothing in the config
 * says so: docs/configuration.md ("Paging styles") warns instead.
 */
export const link = {
  config,
  example: 'next = { type = "link" }',
  step(_next, at) {
    return at === null ? WINDOW : { kind: 'follow', url: at };
  },
  nextPage(_next, page, { missing, follow }) {
    const target = nextLink(page.headers.get('link'));
    if (target === null) return missing('the Link header has no rel="next"');
    return follow(target);
  },
  problems: noProblems,
} satisfies PagingStyle<LinkNext>;
