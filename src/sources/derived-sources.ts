import type { PollerConfig, SourceConfig } from '../config/schema.ts';

/**
 * The source configs of the endpoints beside the main stream, read with the same HttpSource:
 * the deletions stream (`source.deletions`) and the reconciliation listing (`reconcile`).
 * What they leave out is the main source's (headers, time format, timeouts, body limit);
 * their own `params`, `method` and `body` are not: they describe the endpoint's request.
 */

/** `source.deletions` as a source whose records are deletes, versioned by `deleted_at`. */
export function deletionsSource(source: SourceConfig): SourceConfig | null {
  const deletions = source.deletions;
  if (deletions === undefined) return null;
  const { to_param, sorted, deletions: _, deleted: __, body: ___, from_param, ...shared } = source;
  return {
    ...shared,
    url: deletions.url,
    ...optional('from_param', deletions.from_param ?? from_param),
    ...optional('to_param', deletions.to_param ?? to_param),
    items: deletions.items ?? source.items,
    id: deletions.id ?? source.id,
    updated_at: deletions.deleted_at,
    params: deletions.params,
    method: deletions.method,
    ...optional('body', deletions.body),
    ...optional('sorted', deletions.sorted ?? sorted),
    next: deletions.next ?? source.next,
  };
}

/**
 * `reconcile` as a source with no window: every page of one listing, each record's id and
 * (with `reconcile.updated_at`) its version. An empty `from_param` sends no window start; an
 * empty `updated_at` reads ids only (sources/read-update.ts).
 */
export function listingSource(config: PollerConfig): SourceConfig | null {
  const { reconcile, source } = config;
  if (reconcile === undefined) return null;
  const { to_param: _, sorted: __, deletions: ___, body: ____, ...shared } = source;
  return {
    ...shared,
    url: reconcile.url,
    from_param: '',
    items: reconcile.items ?? source.items,
    id: reconcile.id ?? source.id,
    updated_at: reconcile.updated_at ?? '',
    params: reconcile.params,
    method: reconcile.method,
    ...optional('body', reconcile.body),
    next: reconcile.next ?? source.next,
  };
}

/**
 * `source.children` as a source with no window of its own: one parent's children, page by
 * page, with its own request (`url`, `params`, `method`, `body`, `headers` or the source's)
 * and records (`items`, `id`, `updated_at`: without one, ids only, the version the parent's:
 * engine/children.ts). Its auth, time format, timeouts and body limit are the source's.
 */
export function childrenSource(source: SourceConfig): SourceConfig | null {
  const children = source.children;
  if (children === undefined) return null;
  const {
    to_param: _,
    sorted: __,
    deletions: ___,
    body: ____,
    deleted: _____,
    resume: ______,
    errors: _______,
    children: ________,
    ...shared
  } = source;
  return {
    ...shared,
    url: children.url,
    from_param: '',
    params: children.params,
    headers: children.headers ?? source.headers,
    method: children.method,
    ...optional('body', children.body),
    items: children.items,
    id: children.id,
    updated_at: children.updated_at ?? '',
    updated_at_format: children.updated_at_format,
    ...optional('errors', source.errors),
    next: children.next,
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
