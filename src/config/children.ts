import * as z from 'zod';
import { nextSchema } from '../sources/paging/index.ts';
import { parentPaths, parentPathsIn } from '../sources/request/placeholders.ts';
import { maxDeletes } from './max-deletes.ts';
import { body, method } from './request-fields.ts';
import { stampFormat } from './time-fields.ts';

/**
 * `source.children`: requests per parent record. The source's stream is the parents' (it
 * has the window); after each of its pages, each new parent's children are listed from this
 * endpoint, `{parent.<dot path>}` taking the parent's values, and delivered as records of
 * their own (engine/children.ts). Jira comments per changed issue, GitHub comments per issue.
 */

export const childrenSchema = z.strictObject({
  /** The children's endpoint, on source.url's origin; `{parent.<dot path>}` in its path or query. Required. */
  url: z.url({ protocol: /^https?$/ }),
  /** GET (default) or POST. */
  method,
  /** Optional JSON body (with method = "POST"); its strings take {parent.…}, {from} and {to}. */
  body: body.optional(),
  /** Fixed query parameters; their values take {parent.…}, {from} and {to} (default none). */
  params: z.record(z.string(), z.string()).default({}),
  /** Request headers instead of source.headers (default: the source's); values take {parent.…}. */
  headers: z.record(z.string(), z.string()).optional(),
  /** Dot path to the array of children; "" = the body is the array (default ""). */
  items: z.string().default(''),
  /** Dot path of a child's id (default "id"); delivered as `<parent id>/<child id>`. */
  id: z.string().min(1).default('id'),
  /** Optional dot path of a child's updated_at: its version (default: the parent's version). */
  updated_at: z.string().min(1).optional(),
  /** How updated_at is written, as source.updated_at_format (default auto). */
  updated_at_format: stampFormat.default('auto'),
  /** Paging of one parent's children (default { type = "none" }): every style works. */
  next: nextSchema.default({ type: 'none' }),
  /**
   * A child delivered before and no longer listed under its parent is a delete, once a second
   * listing at once agrees (default false).
   */
  deletes: z.boolean().default(false),
  /** Most deletes one parent's listing may deliver, of its known children: a share or a count (default "50%"). */
  max_deletes: maxDeletes.default({ percent: 50 }),
  /** Deliver the parents too, after their children (default false: only the children). */
  deliver_parents: z.boolean().default(false),
});

export type ChildrenConfig = z.output<typeof childrenSchema>;

/** What of a poller the children rules read. */
interface ChildrenShape {
  source: {
    url: string;
    resume?: object | undefined;
    deletions?: object | undefined;
    children?: (Omit<ChildrenConfig, 'max_deletes'> & { max_deletes: unknown }) | undefined;
  };
  reconcile?: object | undefined;
}

/** One problem at its path. */
export interface ChildrenProblem {
  path: (string | number)[];
  message: string;
}

/** Where placeholders may not go in a URL: its scheme, host and port (the origin). */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * What `source.children` cannot work with: another origin than source.url's (the source's
 * credentials go with it), a `{parent.…}` in the URL's origin (a record must not choose
 * where they go), and the stream kinds it is not built for.
 */
export function childrenProblems(poller: ChildrenShape): ChildrenProblem[] {
  const children = poller.source.children;
  if (children === undefined) return [];
  const problems: ChildrenProblem[] = [];
  const at = (key: string, message: string) =>
    problems.push({ path: ['source', 'children', key], message });
  const origin = ORIGIN.exec(children.url)?.[0] ?? '';
  if (parentPaths(origin).length > 0) {
    at(
      'url',
      'may hold {parent.…} only in its path and query: a record must not choose the host the credentials go to',
    );
  } else if (
    URL.canParse(poller.source.url) &&
    URL.canParse(children.url) &&
    new URL(children.url).origin !== new URL(poller.source.url).origin
  ) {
    at(
      'url',
      `must be on source.url's origin (${new URL(poller.source.url).origin}): the source's credentials are sent with it`,
    );
  }
  if (children.body !== undefined && children.method === 'GET') {
    at(
      'method',
      'is "GET", which sends no body, but source.children.body is set: set method = "POST"',
    );
  }
  const used = [
    ...parentPaths(children.url),
    ...parentPathsIn(children.params),
    ...parentPathsIn(children.body),
    ...parentPathsIn(children.headers ?? {}),
  ];
  if (used.length === 0) {
    at(
      'url',
      'names no {parent.<dot path>} in its url, params, body or headers: every parent would list the same children (e.g. {parent.id})',
    );
  }
  if (poller.source.resume !== undefined) {
    problems.push({
      path: ['source', 'resume'],
      message: 'cannot be set together with source.children: children follow a windowed stream',
    });
  }
  if (poller.source.deletions !== undefined) {
    problems.push({
      path: ['source', 'deletions'],
      message:
        'cannot be set together with source.children: a parent deleted there would not take its children along; use children.deletes',
    });
  }
  if (poller.reconcile !== undefined) {
    problems.push({
      path: ['reconcile'],
      message:
        'cannot be set together with source.children: a listing of parents does not see children',
    });
  }
  return problems;
}
