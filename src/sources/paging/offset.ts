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

/** `param` = the records already read in this window: 0, then + each page's length. */
const config = z.strictObject({
  type: z.literal('offset'),
  /** The query parameter that takes the offset (e.g. "offset", json-server's "_start"; in = "body": a dot path). */
  param: requiredFor('next', 'offset'),
  ...sentIn,
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
  step(next, at) {
    // A number: in a body it is a JSON number (Jira's startAt), in the query its digits.
    return send(next, Number(at ?? '0'));
  },
  nextPage(_next, page, { missing }) {
    // Only a page whose body said more is coming gets here empty: it cannot move the offset.
    if (page.items.length === 0) return missing('the page is empty, so the offset cannot move on');
    return { ok: true, next: String(Number(page.cursor ?? '0') + page.items.length) };
  },
  problems: (next, source) => [
    ...positionalProblems('next.type = "offset"', 'offsets')(next, source),
    ...sentInProblems(next, source),
  ],
} satisfies PagingStyle<OffsetNext>;
