/**
 * `reconcile.fetch`: a URL with `{id}` in its path, where each id a listing answered is put
 * to fetch that record. The ids come from the upstream, and the request carries the source's
 * credentials: an id chooses a path segment's text, never the host, the userinfo, the port,
 * the query or which path is asked for.
 */

/** Stands for `{id}` while the template is parsed: letters only, so the parser keeps it as is. */
const SLOT = 'tidemarkfetchidslot';

/** Why `template` cannot be reconcile.fetch, or undefined; `inBody`: the body holds `{id}`. */
export function fetchTemplateProblem(template: string, inBody = false): string | undefined {
  const example = '(e.g. "https://api.example.com/tickets/{id}")';
  if (!template.includes('{id}')) {
    if (inBody && URL.canParse(template)) return undefined;
    return `must be a URL with {id} in it ${example}`;
  }
  const filled = template.replaceAll('{id}', SLOT);
  if (!URL.canParse(filled)) return `must be a URL with {id} in it ${example}`;
  const url = new URL(filled);
  const inPath = url.pathname.split(SLOT).length - 1;
  if (inPath !== template.split('{id}').length - 1) {
    return `may hold {id} only in its path ${example}: a listing's ids would choose the host, the query or the credentials of a request that carries the source's`;
  }
  return undefined;
}

/**
 * The URL that fetches `id`: the id percent-encoded into each `{id}` of the path, or null
 * when the id would still change which path is asked for (`.` or `..`, which a URL parser
 * takes as a dot segment however it is encoded). `template` passed fetchTemplateProblem.
 */
export function fetchUrl(template: string, id: string): string | null {
  const url = new URL(template.replaceAll('{id}', SLOT));
  const path = url.pathname.replaceAll(SLOT, encodeURIComponent(id));
  url.pathname = path;
  return url.pathname === path ? url.href : null;
}

/** `reconcile.fetch` as a table: `{ url, method, body }`. */
export interface FetchTable {
  url: string;
  method: 'GET' | 'POST';
  body?: unknown;
}

/**
 * Why a `reconcile.fetch` table cannot fetch by id, or undefined: `{id}` must be in the
 * URL's path or in a string of the body (a JSON string there: an id cannot change its shape).
 */
export function fetchTableProblem(
  table: FetchTable,
): { path: string[]; message: string } | undefined {
  const inBody = table.body !== undefined && bodyHolds(table.body, ID);
  const problem = fetchTemplateProblem(table.url, inBody);
  if (problem !== undefined) {
    return { path: ['url'], message: inBody ? problem : `${problem}, or {id} in body` };
  }
  if (table.body !== undefined && table.method === 'GET') {
    return {
      path: ['method'],
      message:
        'is "GET", which sends no body, but reconcile.fetch.body is set: set method = "POST"',
    };
  }
  return undefined;
}

const ID = '{id}';

function bodyHolds(value: unknown, text: string): boolean {
  if (typeof value === 'string') return value.includes(text);
  if (Array.isArray(value)) return value.some((item) => bodyHolds(item, text));
  if (value !== null && typeof value === 'object') {
    return Object.values(value).some((item) => bodyHolds(item, text));
  }
  return false;
}

/** The body that fetches `id`: `{id}` in each of its strings replaced by the id, as text. */
export function fetchBody(body: unknown, id: string): unknown {
  if (typeof body === 'string') return body.replaceAll(ID, id);
  if (Array.isArray(body)) return body.map((item) => fetchBody(item, id));
  if (body !== null && typeof body === 'object') {
    return Object.fromEntries(
      Object.entries(body).map(([key, item]) => [key, fetchBody(item, id)]),
    );
  }
  return body;
}

/** `reconcile.fetch`'s URL, as a string or as a table's `url`. */
export function fetchUrlOf(fetch: string | { url: string } | undefined): string | undefined {
  return typeof fetch === 'object' ? fetch.url : fetch;
}
