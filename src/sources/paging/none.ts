import * as z from 'zod';
import { DONE, noProblems, type PagingStyle, WINDOW } from './style.ts';

/** One request per window. */
const config = z.strictObject({ type: z.literal('none') });

type NoneNext = z.output<typeof config>;

/** `none`: the window's one page is all of it. */
export const none = {
  config,
  example: 'next = { type = "none" }',
  step() {
    return WINDOW;
  },
  nextPage() {
    return DONE;
  },
  problems: noProblems,
} satisfies PagingStyle<NoneNext>;
