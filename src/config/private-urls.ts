import { kindOf } from '../delivery/kinds/index.ts';
import { authKindOf } from '../sources/auth/index.ts';
import { fetchUrlOf } from '../sources/fetch-url.ts';
import { isPrivateHost } from './fleet-hosts.ts';
import { reachedUrls } from './reach.ts';
import type { PollerConfig } from './schema.ts';

/** A URL of a poller's config, by its key. */
export interface KeyedUrl {
  key: string;
  url: string;
}

/**
 * The URLs of a poller's config that name this machine or a private network (localhost,
 * 127.0.0.1, 10.x, `*.internal`: isPrivateHost). They answer under `npm start`, but a
 * deployed Worker cannot reach them. A request through `source.service` goes to that
 * binding's Worker, not to its URL's host, so the source's own URLs are not counted then.
 */
export function privateUrls(poller: string, config: PollerConfig): KeyedUrl[] {
  const { source } = config;
  const viaBinding = source.service !== undefined;
  const urls: KeyedUrl[] = [];
  if (!viaBinding) {
    urls.push({ key: 'source.url', url: source.url });
    const beside: [string, string | undefined][] = [
      ['source.deletions.url', source.deletions?.url],
      ['source.children.url', source.children?.url],
      ['reconcile.url', config.reconcile?.url],
      ['reconcile.fetch', fetchUrlOf(config.reconcile?.fetch)?.replaceAll('{id}', 'id')],
    ];
    for (const [key, url] of beside) if (url !== undefined) urls.push({ key, url });
  }
  // A token endpoint on the source's origin goes the source's way (poller/wiring.ts).
  const auth = source.auth === undefined ? [] : authKindOf(source.auth).reach(source.auth);
  for (const reached of reachedUrls(auth)) {
    if (!(viaBinding && sameOrigin(reached.url, source.url))) urls.push(reached);
  }
  urls.push(...reachedUrls(kindOf(config.deliver).reach(config.deliver, poller)));
  return urls.filter(({ url }) => URL.canParse(url) && isPrivateHost(new URL(url).hostname));
}

function sameOrigin(a: string, b: string): boolean {
  return URL.canParse(a) && URL.canParse(b) && new URL(a).origin === new URL(b).origin;
}
