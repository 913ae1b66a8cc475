import * as z from 'zod';
import { DONE, noProblems, type PagingStyle } from './style.ts';

/** One request per window. */
const config = z.strictObject({ type: z.literal('none') });

type NoneNext = z.output<typeof config>;

/** `none`: the window's one page is all of it. */
export const none = {
  config,
  example: 'next = { type = "none" }',
  pageUrl(_next, windowUrl) {
    return windowUrl();
  },
  nextPage() {
    return DONE;
  },
  problems: noProblems,
} satisfies PagingStyle<NoneNext>;
