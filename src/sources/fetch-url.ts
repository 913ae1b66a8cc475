/**
 * `reconcile.fetch`: a URL with `{id}` in its path, where each id a listing answered is put
 * to fetch that record. The ids come from the upstream, and the request carries the source's
 * credentials: an id chooses a path segment's text, never the host, the userinfo, the port,
 * the query or which path is asked for.
 */

/** Stands for `{id}` while the template is parsed: letters only, so the parser keeps it as is. */
const SLOT = 'tidemarkfetchidslot';

/** Why `template` cannot be reconcile.fetch, or undefined. */
export function fetchTemplateProblem(template: string): string | undefined {
  const example = '(e.g. "https://api.example.com/tickets/{id}")';
  if (!template.includes('{id}')) return `must be a URL with {id} in it ${example}`;
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
