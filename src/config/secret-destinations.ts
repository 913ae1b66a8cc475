import { kindOf } from '../delivery/kinds/index.ts';
import { authKindOf } from '../sources/auth/index.ts';
import { childrenSource, deletionsSource, listingSource } from '../sources/derived-sources.ts';
import { fetchUrlOf } from '../sources/fetch-url.ts';
import { reachedUrls } from './reach.ts';
import type { PollerConfig, SourceConfig } from './schema.ts';

/**
 * Where a poller's own secrets go (R18): the origins of the requests a config makes, and for
 * a secret's value, the origins of those that carry it. A secret is bound to what this says
 * under the config it was set for, and wiring refuses a config that would send it elsewhere.
 *
 * It is worked out from the config's values, not from a list of keys: each request is the
 * part of the config the wiring builds it from (the source, its deletions stream, the listing,
 * the fetch by id, the token endpoint, the delivery), and a value goes with a request when
 * any string of that part holds it. Two nets catch what no request accounts for: any other
 * http(s) URL in the config counts as a request carrying all of it, and a value no request
 * carries counts as sent to every origin of the config. A key added tomorrow is thus covered
 * before anyone thinks of it, at worst more strictly than it needs.
 */

/** One request a config makes: its key, its origin, and the part of the config that goes with it. */
export interface ConfigRequest {
  key: string;
  origin: string;
  carries: unknown;
}

/** The requests `config` makes (static or runtime alike), with `poller` for its delivery. */
export function requestsOf(config: PollerConfig, poller: string): ConfigRequest[] {
  const known: { key: string; url: string; carries: unknown }[] = [
    { key: 'source.url', url: config.source.url, carries: upstreamPart(config.source) },
  ];
  // The endpoints beside the source's, each read as a source of its own (derived-sources.ts).
  const beside: [string, SourceConfig | null][] = [
    ['source.deletions.url', deletionsSource(config.source)],
    ['source.children.url', childrenSource(config.source)],
    ['reconcile.url', listingSource(config)],
  ];
  for (const [key, source] of beside) {
    if (source !== null) known.push({ key, url: source.url, carries: upstreamPart(source) });
  }
  const fetch = config.reconcile?.fetch;
  const template = fetchUrlOf(fetch);
  if (template !== undefined) {
    // sources/fetch-record.ts: the URL (and its body), with the source's headers and its Authorization.
    const { headers, auth } = upstreamPart(config.source);
    known.push({ key: 'reconcile.fetch', url: template, carries: { fetch, headers, auth } });
  }
  // What source.auth reaches besides the upstream (a token endpoint) is sent its table.
  const auth = config.source.auth;
  if (auth !== undefined) {
    for (const { key, url } of reachedUrls(authKindOf(auth).reach(auth))) {
      known.push({ key, url, carries: auth });
    }
  }
  for (const { key, url } of reachedUrls(kindOf(config.deliver).reach(config.deliver, poller))) {
    known.push({ key, url, carries: config.deliver });
  }
  const urls = new Set(known.map((request) => request.url));
  // Any other URL in the config: a request nobody told this module about, carrying it all.
  for (const [key, url] of stringsOf(config)) {
    if (!urls.has(url) && originOf(url) !== null) known.push({ key, url, carries: config });
  }
  return known.flatMap(({ key, url, carries }) => {
    const origin = originOf(url);
    return origin === null ? [] : [{ key, origin, carries }];
  });
}

/**
 * The origins a secret's `value` is sent to under `config`: those of every request whose part
 * of the config holds it, or, when none does, every origin of the config. Sorted, each once.
 */
export function originsOf(requests: readonly ConfigRequest[], value: string): string[] {
  const carrying = requests.filter((request) =>
    stringsOf(request.carries).some(([, text]) => text.includes(value)),
  );
  const chosen = carrying.length > 0 ? carrying : requests;
  return [...new Set(chosen.map((request) => request.origin))].sort();
}

/** `https://api.example.com` for a URL (a `{id}` template too); null when it is not http(s). */
export function originOf(url: string): string | null {
  if (!/^https?:\/\//i.test(url)) return null;
  try {
    return new URL(url.replaceAll('{id}', 'x')).origin;
  } catch {
    return null;
  }
}

/**
 * What goes with a request to the upstream: its source config less the deletions stream
 * (a request of its own), and less a source.auth whose values go to its token endpoint only
 * (oauth2's client secret and refresh token, jwt_bearer's private key: the upstream is sent
 * the access token it returns). A static credential (bearer, basic, api_key) goes with it.
 */
function upstreamPart(source: SourceConfig): Partial<SourceConfig> {
  const { deletions: _, auth, ...rest } = source;
  return auth === undefined || !authKindOf(auth).toUpstream ? rest : { ...rest, auth };
}

/** Every string in `node`, with the path where it sits; `labels` are data, never sent. */
function stringsOf(node: unknown, at = ''): [string, string][] {
  if (typeof node === 'string') return [[at, node]];
  if (Array.isArray(node)) return node.flatMap((item, index) => stringsOf(item, `${at}[${index}]`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, item]) =>
    at === '' && key === 'labels' ? [] : stringsOf(item, at === '' ? key : `${at}.${key}`),
  );
}
