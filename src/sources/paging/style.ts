import * as z from 'zod';

/**
 * What a page said about the next one. A page that says more is coming but not where it is
 * a bad response (retried, C unchanged): taking it as the last page would lose the rest.
 */
export type NextPage =
  | { ok: true; next: string | null }
  | { ok: false; kind: 'misconfigured' | 'bad_response'; error: string };

/** A page as the source read it, to find the next one from. */
export interface ReadPage {
  /** Where it came from (after same-origin redirects). */
  url: URL;
  body: unknown;
  headers: Headers;
  /** The records array at `source.items`. */
  items: unknown[];
  /** What named this page: null for the window's first. */
  cursor: string | null;
}

/**
 * The poller's memo of the next-page body paths its pages had (see nextPathSighting): a
 * path seen on some page is never warned of, one missed on a page with records and never
 * seen is (its status names it). Kept at no storage write per page.
 */
export interface NextPathMemo {
  saw(path: string, present: boolean): void;
}

/** What a style's next-page rule leans on (built by paging/index.ts for each page). */
export interface NextTools {
  /**
   * The page gives no way on (`what` says why): the end of the window, unless its body said
   * more is coming, which makes it a bad response.
   */
  missing(what: string): NextPage;
  /** A next URL, absolute or relative to the page: followed only on source.url's origin. */
  follow(target: string): NextPage;
  /** `source.id`: the dot path of a record's id. */
  id: string;
}

/** Something a style cannot work with in the rest of `source`, at a path under it. */
export interface SourceProblem {
  path: string[];
  message: string;
}

/**
 * One paging style: how a window's pages are reached. Every style is one module
 * (src/sources/paging/<name>.ts) registered in paging/index.ts; the shared case suite
 * (test/engine/paging-styles.test.ts) runs the same cases against each.
 */
export interface PagingStyle<C extends { type: string }> {
  /** Its `source.next` table: a strict zod object whose `type` is the style's name. */
  readonly config: z.ZodType<C>;
  /** The `source.next` line docs/configuration.md's "Paging styles" shows (a test checks it is there and valid). */
  readonly example: string;
  /**
   * What the page `cursor` names (null: the window's first) asks for beyond the window's
   * request: nothing, the style's value (sent where `next.in` says: sources/request/), or
   * the upstream's own URL for it.
   */
  step(next: C, cursor: string | null): PageStep;
  /**
   * Where the page after `page` is, or null when it was the last. Called once the rules every
   * style shares (an empty page, `stop`, `more`) have not already ended the window.
   */
  nextPage(next: C, page: ReadPage, tools: NextTools): NextPage;
  /** What it cannot work with in the rest of `source` (config errors). */
  problems(next: C, source: SourceShape): SourceProblem[];
}

/**
 * What a page's request asks for beyond the window's request (sources/request/build.ts
 * builds it): the window's request as it is, the style's value at `param` (in the query, or
 * at that dot path in the body), or a URL the upstream gave for the next page.
 */
export type PageStep =
  | { kind: 'window' }
  | { kind: 'send'; param: string; in: SentIn; value: string | number }
  | { kind: 'follow'; url: string };

/** Where a style that sends a value sends it: `next.in`. */
export type SentIn = 'query' | 'body';

/** The window's request as it is: a first page, or a style that sends nothing. */
export const WINDOW: PageStep = { kind: 'window' };

/** `next.in` of the styles that send a value (cursor, page, offset, last_id). */
export const sentIn = {
  /** "query" (default): `param` is a query parameter; "body": a dot path into source.body. */
  in: z.enum(['query', 'body']).default('query'),
};

/** The style's `value`, sent at `next.param` where `next.in` says. */
export function send(next: { param: string; in: SentIn }, value: string | number): PageStep {
  return { kind: 'send', param: next.param, in: next.in, value };
}

/** What of `source` a style's problems look at. */
export interface SourceShape {
  sorted?: 'asc' | undefined;
  /** The dot path of the records array ("": the body is the array). */
  items?: string | undefined;
  /** The request's method (default "GET"). */
  method?: 'GET' | 'POST' | undefined;
  /** The request's body, as configured. */
  body?: unknown;
  /** Whether its request sends the window's end (to_param or {to}): see sendsWindowEnd. */
  bounded?: boolean | undefined;
}

/**
 * What a style that sends a value cannot work with when it sends it in the body: a GET (no
 * body), a body that is not a table (no key to put it at), a `param` that is no dot path.
 */
export function sentInProblems(
  next: { param: string; in: SentIn },
  source: SourceShape,
): SourceProblem[] {
  if (next.in !== 'body') return [];
  const problems: SourceProblem[] = [];
  if ((source.method ?? 'GET') !== 'POST') {
    problems.push({
      path: ['next', 'in'],
      message: 'is "body" but the request is a GET, which has no body: set method = "POST"',
    });
  }
  const body = source.body;
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    problems.push({
      path: ['next', 'in'],
      message: `is "body" but the body is not a table: next.param "${next.param}" has no place in it`,
    });
  }
  const path = dotPathProblem(next.param);
  if (path !== null) problems.push({ path: ['next', 'param'], message: path });
  return problems;
}

/**
 * Why a dot path is almost surely misspelt, or null: an empty step (a leading, trailing or
 * doubled ".", as jq's `.meta.next`), or a step that starts or ends with a space. Misspelt
 * this way, a next-page path reads as missing on every page: each window ends at its first.
 * A key that holds a dot inside (`@odata.nextLink`) is no problem (sources/dot-path.ts); one
 * that starts or ends with a dot, or holds "..", is the price: a path checked here cannot reach it.
 */
export function dotPathProblem(path: string): string | null {
  const steps = path.split('.');
  if (steps.some((step) => step === '')) {
    return `"${path}" has an empty step (a leading, trailing or doubled "."): write the keys as the body has them, with no leading "." (this path cannot reach a key that starts or ends with "." or holds "..")`;
  }
  if (steps.some((step) => step.trim() !== step)) {
    return `"${path}" has a step that starts or ends with a space: write the key as the body has it`;
  }
  return null;
}

/** Steps without a dot, none empty, none starting or ending with white space. */
const DOT_PATH = '^[^.\\s](?:[^.]*[^.\\s])?(?:\\.[^.\\s](?:[^.]*[^.\\s])?)*$';

/** A body path a style reads (`field`: its string schema): one that can be found as written. */
export function bodyPath<T extends z.ZodString>(field: T) {
  return field.meta({ pattern: DOT_PATH }).superRefine((path, ctx) => {
    const problem = dotPathProblem(path);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** Optional body paths every paging style but `none` may read. */
export const lastPage = {
  /** Optional body path; true means this was the last page. */
  stop: bodyPath(z.string().min(1)).optional(),
  /** Optional body path; false means this was the last page. */
  more: bodyPath(z.string().min(1)).optional(),
};

/** Ends the window: this page was the last. */
export const DONE: NextPage = { ok: true, next: null };

/** A style that any `source` suits. */
export function noProblems(): SourceProblem[] {
  return [];
}

/**
 * The problems of paging by position (page numbers, offsets, a cursor that is an offset;
 * `what` names them, `style` the config that pages so). Over records sorted oldest first, a
 * record updated mid-paging moves to the end: every record after it shifts one place back,
 * and one slips past unseen. Over a bounded window (the request sends its end), a record
 * updated mid-paging is stamped at or after that end and drops out of the results: the same
 * shift, whatever the order. Sorted newest first over an open window, a changed record moves
 * to the front and records only repeat (the ledger absorbs that).
 */
export function positionalProblems(
  style: string,
  what: string,
): (next: unknown, source: SourceShape) => SourceProblem[] {
  return (_next, source) => {
    const problems: SourceProblem[] = [];
    if (source.sorted === 'asc') {
      problems.push({
        path: ['sorted'],
        message:
          `cannot be "asc" with ${style}: ${what} over records sorted oldest first ` +
          'shift when a record is updated mid-paging, and a record can slip past unseen; sort newest ' +
          'first (duplicates only) or use a keyset cursor',
      });
    }
    if (source.bounded === true) {
      problems.push({
        path: ['next'],
        message:
          `${what} cannot page a bounded window (to_param, or {to} in the url, params or body): ` +
          "a record updated while paging is stamped at or after the window's end and drops out of " +
          'the results, every later record moves back one place and the next page skips one; drop ' +
          'to_param, {to} and max_window and sort newest first (a changed record then moves to the ' +
          'front and is read again), or page with a keyset cursor',
      });
    }
    return problems;
  };
}

/** A value as an error message shows it: short, and "missing" for nothing. */
export function shown(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/**
 * Where a next-page body path (`what`: the cursor, the next URL) can never hold one: at the
 * records array (`source.items`) or at an object that holds it, never a string. Every page
 * would read as its window's last.
 */
export function bodyPathProblems(
  path: string,
  { items }: SourceShape,
  what: string,
): SourceProblem[] {
  if (items === undefined || items === '') return [];
  if (path !== items && !items.startsWith(`${path}.`)) return [];
  return [
    {
      path: ['next', 'path'],
      message: `"${path}" cannot hold ${what}: that is where the records are (source.items = "${items}"), never ${what}`,
    },
  ];
}

/**
 * A next-page body path read from a body that is the array of records (`items = ""`): an
 * array has no key for a cursor or a URL, so every page would read as its window's last. A
 * warning (npm run check-config), not an error: a config whose source is not read over HTTP
 * (the simulation's) leaves `items` at its default.
 */
export function arrayBodyWarning(
  path: string,
  { items }: SourceShape,
  what: string,
): string | null {
  if (items !== '') return null;
  return `"${path}" cannot hold ${what}: source.items is "" (the body is the array of records), which has no key for it; use a next.type that does not read the body ("link", "page", "offset" or "last_id"), or set source.items`;
}
