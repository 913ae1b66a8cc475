/**
 * The credentials tidemark sends, in every form an endpoint may echo them back in an error
 * body (which status, the run history and logs show to read-token holders): registered for
 * redaction beside the `${NAME}` values, so that a credential written into the config as it
 * is, or one tidemark builds (a Basic header is base64), is taken out too.
 */

/** A header or parameter name's words that mark its value as a credential. */
const CREDENTIAL_WORDS: ReadonlySet<string> = new Set([
  'authorization',
  'auth',
  'token',
  'key',
  'apikey',
  'secret',
  'password',
  'passwd',
  'cookie',
  'session',
  'signature',
  'credential',
  'credentials',
]);

/** Last words of a name that say its value is where to send or find one, not the credential. */
const NOT_A_VALUE: ReadonlySet<string> = new Set(['url', 'param', 'path']);

/**
 * The forms of an Authorization header value (or any credential) to redact: the value, the
 * part after its scheme, and for `Basic` its payload without padding, the decoded
 * `user:password` and the password (each also percent-decoded, as a token endpoint's client
 * credentials are encoded). The user name alone is no secret and is left shown.
 */
export function credentialForms(value: string): string[] {
  const forms = new Set([value]);
  const scheme = /^([A-Za-z][A-Za-z0-9._~+-]*)\s+(\S.*)$/.exec(value);
  if (scheme?.[1] !== undefined && scheme[2] !== undefined) {
    const payload = scheme[2];
    forms.add(payload);
    if (scheme[1].toLowerCase() === 'basic') {
      forms.add(payload.replace(/=+$/, ''));
      for (const pair of decodedPair(payload)) {
        forms.add(pair);
        const colon = pair.indexOf(':');
        if (colon >= 0) forms.add(pair.slice(colon + 1));
      }
    }
  }
  return [...forms].filter((form) => form.length > 0);
}

/**
 * Every credential a config sends as it is: the value of each key whose name says it is one
 * (an Authorization or X-Api-Key header, an `api_key` parameter, `password`, `client_secret`,
 * `refresh_token`, wherever in the config), in every form `credentialForms` gives. A name
 * ending in url, param or path is where a credential goes, not one (`token_url`).
 */
export function credentialsIn(config: unknown): string[] {
  const found = new Set<string>();
  const walk = (node: unknown, key: string | null) => {
    if (typeof node === 'string') {
      if (key !== null && isCredentialName(key))
        for (const form of credentialForms(node)) found.add(form);
      return;
    }
    if (Array.isArray(node)) {
      for (const item of node) walk(item, key);
      return;
    }
    if (node !== null && typeof node === 'object') {
      for (const [name, item] of Object.entries(node)) walk(item, name);
    }
  };
  walk(config, null);
  return [...found];
}

/** Whether a header, parameter or config key's name marks its value as a credential. */
export function isCredentialName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
  const last = words.at(-1);
  if (last === undefined || NOT_A_VALUE.has(last)) return false;
  return words.some((word) => CREDENTIAL_WORDS.has(word));
}

/** A Basic payload decoded (UTF-8), as sent and percent-decoded; none when it is not base64. */
function decodedPair(payload: string): string[] {
  let text: string;
  try {
    const binary = atob(payload);
    text = new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
  } catch {
    return [];
  }
  const pairs = [text];
  try {
    pairs.push(
      text
        .split(':')
        .map((part) => decodeURIComponent(part))
        .join(':'),
    );
  } catch {
    // Not percent-encoded: the text as decoded is the pair.
  }
  return pairs;
}
