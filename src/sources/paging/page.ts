import * as z from 'zod';
import { requiredFor } from '../../config/fields.ts';
import {
  lastPage,
  type PagingStyle,
  positionalProblems,
  send,
  sentIn,
  sentInProblems,
} from './style.ts';

/** `param` = 1, 2, 3… until an empty page. */
const config = z.strictObject({
  type: z.literal('page'),
  /** The query parameter that takes the page number (in = "body": a dot path into the body). */
  param: requiredFor('next', 'page'),
  ...sentIn,
  ...lastPage,
});

type PageNext = z.output<typeof config>;

/** `page`: numbered pages from 1, until an empty one. Positional: unsafe sorted oldest first. */
export const page = {
  config,
  example: 'next = { type = "page", param = "page" }',
  step(next, at) {
    return send(next, Number(at ?? '1'));
  },
  nextPage(_next, read) {
    return { ok: true, next: String(Number(read.cursor ?? '1') + 1) };
  },
  problems: (next, source) => [
    ...positionalProblems('next.type = "page"', 'numbered pages')(next, source),
    ...sentInProblems(next, source),
  ],
} satisfies PagingStyle<PageNext>;
