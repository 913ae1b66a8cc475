import { referencedNames } from './interpolate.ts';

/**
 * A replace (PUT of an existing runtime poller) must not carry the poller's own secrets to a
 * new place: whoever may replace a config could otherwise point source.url at a host of their
 * own and collect the credentials a customer set for the old one.
 */

/** The PUT body's own key, not part of the config: `"keep_secrets": true`. */
const KEEP_SECRETS = 'keep_secrets';

/** A PUT body split into the poller's config and `keep_secrets` (taken out before validation). */
export function takeKeepSecrets(
  body: unknown,
): { ok: true; config: unknown; keepSecrets: boolean } | { ok: false; error: string } {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !(KEEP_SECRETS in body)) {
    return { ok: true, config: body, keepSecrets: false };
  }
  const { [KEEP_SECRETS]: keep, ...config } = body as Record<string, unknown>;
  if (typeof keep !== 'boolean') {
    return { ok: false, error: `${KEEP_SECRETS}: expected true or false` };
  }
  return { ok: true, config, keepSecrets: keep };
}

/**
 * The poller's own secrets (`own`, by name) that `next` would send to another origin than
 * `previous` did: those `${NAME}` in `source` when source.url's origin changes, and in
 * `deliver` when a webhook's deliver.url's does. They must be set again for the new place.
 */
export function secretsOffOrigin(
  previous: unknown,
  next: unknown,
  own: readonly string[],
): string[] {
  const moved = new Set<string>();
  for (const part of ['source', 'deliver'] as const) {
    const before = destination(previous, part);
    const after = destination(next, part);
    if (after === undefined || after === before) continue;
    for (const name of referencedNames(field(next, part), part)) {
      if (own.includes(name)) moved.add(name);
    }
  }
  return [...moved];
}

/**
 * Where a part of the config sends its requests: source.url's origin (and its OAuth token
 * endpoint's, sent the client secret and refresh token), a webhook's deliver.url's.
 */
function destination(config: unknown, part: 'source' | 'deliver'): string | undefined {
  const section = field(config, part);
  if (part === 'deliver' && field(section, 'type') !== 'webhook') return undefined;
  const url = field(section, 'url');
  if (typeof url !== 'string') return undefined;
  const tokenUrl = part === 'source' ? field(field(section, 'auth'), 'token_url') : undefined;
  return typeof tokenUrl === 'string' ? `${originOf(url)} ${originOf(tokenUrl)}` : originOf(url);
}

/** The origin of a URL as written (`${NAME}` and all), or its text when it does not parse. */
function originOf(url: string): string {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? url.toLowerCase() : origin;
  } catch {
    return url.toLowerCase();
  }
}

function field(node: unknown, key: string): unknown {
  return node !== null && typeof node === 'object'
    ? (node as Record<string, unknown>)[key]
    : undefined;
}
