import * as z from 'zod';
import { fetchTableProblem, fetchTemplateProblem } from '../sources/fetch-url.ts';
import {
  type BoundName,
  usesPlaceholder,
  usesPlaceholderIn,
} from '../sources/request/placeholders.ts';
import { formatSize } from './size.ts';

/**
 * The keys that shape a request beside its URL: `method` and `body`, for the source, its
 * deletions stream and the reconciliation's listing; and the rules on where the window's
 * bounds go (`from_param`, `to_param`, the `{from}` and `{to}` placeholders).
 */

/** The largest body a config may send, as JSON: the default cap of a whole runtime config. */
export const MAX_BODY_BYTES = 32 * 1024;

/** "GET" (default) or "POST". */
export const method = z.enum(['GET', 'POST']).default('GET');

/** Any JSON value (a TOML table), sent as JSON; at most MAX_BODY_BYTES of it. */
export const body = z
  .json()
  .meta({ id: 'JsonValue' })
  .superRefine((value, ctx) => {
    const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
    if (bytes > MAX_BODY_BYTES) {
      ctx.addIssue({
        code: 'custom',
        message: `is ${formatSize(bytes)} as JSON: a body is capped like a config, at ${formatSize(MAX_BODY_BYTES)}`,
      });
    }
  });

/**
 * `reconcile.fetch`: a URL with `{id}` in its path, or a table `{ url, method, body }` whose
 * body may hold the `{id}` instead.
 */
export const fetchField = z.union([
  z.string().superRefine((text, ctx) => {
    const problem = fetchTemplateProblem(text);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  }),
  z
    .strictObject({
      /** The URL; `{id}` in its path, or in the body. Required. */
      url: z.string(),
      /** GET (default) or POST. */
      method,
      /** Optional JSON body (with method = "POST"); `{id}` in its strings is the id. */
      body: body.optional(),
    })
    .superRefine((table, ctx) => {
      const problem = fetchTableProblem(table);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', ...problem });
    }),
]);

/** What of a request's config these rules read. */
export interface RequestShape {
  url: string;
  params: Record<string, string>;
  method: 'GET' | 'POST';
  body?: unknown;
  from_param?: string | undefined;
  to_param?: string | undefined;
}

/** One problem, at a path under the table it is about. */
export interface RequestProblem {
  path: (string | number)[];
  message: string;
}

/** Whether the request sends the window bound `name`: `{name}` in its url, params or body. */
export function usesBound(shape: Omit<RequestShape, 'method'>, name: BoundName): boolean {
  return (
    usesPlaceholder(shape.url, name) ||
    usesPlaceholderIn(shape.params, name) ||
    usesPlaceholderIn(shape.body, name)
  );
}

/**
 * Whether a source sends its window's end, as `to_param` or `{to}`: then its windows are
 * bounded, and `max_window` can cut a backlog into them.
 */
export function sendsWindowEnd(shape: Omit<RequestShape, 'method'>): boolean {
  return shape.to_param !== undefined || usesBound(shape, 'to');
}

/** Where placeholders may not go in a URL: its scheme, host and port (the origin). */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * What a request's config cannot send: a body with a GET, a placeholder in the URL's
 * origin (the window must not choose where the credentials go), and, for a request with a
 * window (`windowed`), no window start at all; without one, any placeholder.
 */
export function requestProblems(
  shape: RequestShape,
  table: string,
  windowed: boolean,
): RequestProblem[] {
  const problems: RequestProblem[] = [];
  // Reported at `method`, not `body`: the body's placeholders still count for the rules below.
  if (shape.body !== undefined && shape.method === 'GET') {
    problems.push({
      path: ['method'],
      message: `is "GET", which sends no body, but ${table}.body is set: set method = "POST"`,
    });
  }
  const origin = ORIGIN.exec(shape.url)?.[0] ?? '';
  if (usesPlaceholder(origin, 'from') || usesPlaceholder(origin, 'to')) {
    problems.push({
      path: ['url'],
      message:
        'may hold {from} and {to} only in its path and query: a window bound must not choose the host its credentials go to',
    });
  }
  if (!windowed) {
    for (const name of ['from', 'to'] as const) {
      if (usesBound(shape, name)) {
        problems.push({
          path: [],
          message: `uses {${name}} in its url, params or body, but a listing has no window; write {{${name}}} for a literal {${name}}`,
        });
      }
    }
    return problems;
  }
  if ((shape.from_param === undefined || shape.from_param === '') && !usesBound(shape, 'from')) {
    problems.push({
      path: ['from_param'],
      message: `is required unless ${table}.url, params or body sends the window start as {from}: a request without it would ask for every record every time`,
    });
  }
  return problems;
}

/** What of a poller's config `requestRules` reads: its three requests with a URL of their own. */
interface PollerShape {
  source: RequestShape & {
    deletions?: (RequestShape & { url: string }) | undefined;
    /** source.resume: rounds start from a token, so the window's start need not be sent. */
    resume?: object | undefined;
  };
  reconcile?: RequestShape | undefined;
}

/**
 * The request problems of a poller, at their paths: the source's (with its window), the
 * deletions stream's (its own window: a from_param left out is the source's) and the
 * listing's (no window, so no placeholder).
 */
export function requestRules(poller: PollerShape): RequestProblem[] {
  const { source, reconcile } = poller;
  const { deletions } = source;
  const requests: [string[], RequestShape, boolean][] = [[['source'], source, true]];
  if (deletions !== undefined) {
    const inherited = {
      ...deletions,
      from_param: deletions.from_param ?? source.from_param,
      to_param: deletions.to_param ?? source.to_param,
    };
    requests.push([['source', 'deletions'], inherited, true]);
  }
  if (reconcile !== undefined) requests.push([['reconcile'], reconcile, false]);
  const resumed = source.resume !== undefined;
  return requests.flatMap(([path, shape, windowed]) =>
    requestProblems(shape, path.join('.'), windowed)
      // A round starts from its token: a from_param or {from} is optional (config/resume.ts).
      .filter((problem) => !(resumed && path.length === 1 && problem.path[0] === 'from_param'))
      .map((problem) => ({
        path: [...path, ...problem.path],
        message: problem.message,
      })),
  );
}
