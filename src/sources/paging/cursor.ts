import * as z from 'zod';
import { requiredFor } from '../../config/fields.ts';
import { readPath } from '../dot-path.ts';
import {
  bodyPath,
  bodyPathProblems,
  lastPage,
  type PagingStyle,
  positionalProblems,
  send,
  sentIn,
  sentInProblems,
  shown,
  WINDOW,
} from './style.ts';

/** The body path `path` holds an opaque cursor, sent back as `param`. */
const config = z.strictObject({
  type: z.literal('cursor'),
  /** The query parameter that takes the cursor (with in = "body": a dot path into the body). */
  param: requiredFor('next', 'cursor'),
  ...sentIn,
  /** Body path of the next cursor (a string or a number). */
  path: bodyPath(requiredFor('next', 'cursor')),
  /**
   * Optional: true declares a cursor that is an offset (HubSpot search's `after`), which
   * loses records as `page` and `offset` do, so their rules apply.
   */
  positional: z.boolean().optional(),
  ...lastPage,
});

type CursorNext = z.output<typeof config>;

/**
 * `cursor`: an opaque cursor in the body, sent back as a query parameter (keyset: order-safe,
 * unless `positional` says it is an offset).
 */
export const cursor = {
  config,
  example: 'next = { type = "cursor", param = "cursor", path = "next_cursor" }',
  step(next, at) {
    // Absent on the first page: the window's request as it is.
    return at === null ? WINDOW : send(next, at);
  },
  nextPage(next, page, { missing }) {
    const value = readPath(page.body, next.path);
    if (typeof value === 'number') return { ok: true, next: String(value) };
    if (typeof value === 'string' && value !== '') return { ok: true, next: value };
    return missing(`the next cursor at "${next.path}" is ${shown(value)}`);
  },
  problems(next, source) {
    return [
      ...(next.positional === true
        ? positionalProblems('next.positional = true', 'offset cursors')(next, source)
        : []),
      ...bodyPathProblems(next.path, source, 'the next cursor'),
      ...sentInProblems(next, source),
    ];
  },
} satisfies PagingStyle<CursorNext>;
