import * as z from 'zod';
import { requiredFor } from '../../config/fields.ts';
import { readPath } from '../dot-path.ts';
import {
  lastPage,
  type PagingStyle,
  send,
  sentIn,
  sentInProblems,
  shown,
  WINDOW,
} from './style.ts';

/** `param` = the id of the last record of the page, while `more` is true. */
const config = z.strictObject({
  type: z.literal('last_id'),
  /** The query parameter that takes the last record's id (in = "body": a dot path into the body). */
  param: requiredFor('next', 'last_id'),
  ...sentIn,
  ...lastPage,
});

type LastIdNext = z.output<typeof config>;

/** `last_id`: the last record's id, sent back (Stripe `starting_after`; keyset: order-safe). */
export const lastId = {
  config,
  example: 'next = { type = "last_id", param = "starting_after", more = "has_more" }',
  step(next, at) {
    return at === null ? WINDOW : send(next, at);
  },
  nextPage(_next, page, { missing, id: idPath }) {
    const last = page.items.at(-1);
    const id = last === undefined ? undefined : readPath(last, idPath);
    if (typeof id === 'number' || (typeof id === 'string' && id !== '')) {
      return { ok: true, next: String(id) };
    }
    return missing(
      last === undefined
        ? 'the page has no records to take the last id from'
        : `the last record's id at "${idPath}" is ${shown(id)}`,
    );
  },
  problems(next, source) {
    return sentInProblems(next, source);
  },
} satisfies PagingStyle<LastIdNext>;
