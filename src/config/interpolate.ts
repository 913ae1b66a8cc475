/** The keys that seal per-poller secrets: never interpolated into a request. */
const KEYS_NEVER_SENT = new Set(['SECRETS_KEY', 'SECRETS_KEY_PREVIOUS']);

/**
 * `${NAME}`, a reference to a secret or var inside a config string, or `$${`, which writes a
 * literal `${` (so a URL or header can hold one). Scanned left to right in one pass, so a
 * value that came from a reference is never read again.
 */
const TOKEN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Top-level keys that are data, never interpolated: labels are shown and filtered as written. */
const DATA_KEYS: ReadonlySet<string> = new Set(['labels']);

/** One `${NAME}` and the value it stood for. */
export interface Reference {
  name: string;
  value: string;
}

export interface Interpolated {
  value: unknown;
  /** Values substituted for `${NAME}`: they are secrets and must be redacted wherever shown. */
  secrets: string[];
  /** Each `${NAME}` substituted, with its value: to show text as its template, `${NAME}`. */
  references: Reference[];
  /** One message per missing variable, with the path where it was used. Never a value. */
  errors: string[];
}

/** Who may use which `${NAME}`, and how to set one that is missing. */
export interface InterpolateOptions {
  /** Why `name` may not be used at all here (checked before it is looked up), or undefined. */
  refuse?: (name: string) => string | undefined;
  /** How to set a `name` that is not set, for its error. */
  unsetHint?: (name: string) => string;
}

const workerHint = (name: string) =>
  `run \`wrangler secret put ${name}\`, or add it to .dev.vars locally`;

/**
 * Replaces every `${NAME}` in the strings of `raw` with `env[NAME]`, and every `$${` with
 * `${`. A missing or non-string variable is an error naming the variable and the key, so a
 * typo never reaches the upstream. `labels` stay as written.
 */
export function interpolate(
  raw: unknown,
  env: Record<string, unknown>,
  options: InterpolateOptions = {},
): Interpolated {
  const secrets: string[] = [];
  const references: Reference[] = [];
  const errors: string[] = [];
  const unsetHint = options.unsetHint ?? workerHint;
  const value = mapStrings(raw, (text, at) =>
    text.replace(TOKEN, (whole, name: string | undefined) => {
      if (name === undefined) return '${';
      const refused =
        options.refuse?.(name) ??
        (KEYS_NEVER_SENT.has(name)
          ? "it would send the key that seals every poller's secrets"
          : undefined);
      if (refused !== undefined) {
        errors.push(`${at}: \${${name}} cannot be used in a config: ${refused}`);
        return whole;
      }
      const found = env[name];
      if (typeof found !== 'string' || found === '') {
        errors.push(`${at}: \${${name}} is not set (${unsetHint(name)})`);
        return whole;
      }
      secrets.push(found);
      if (!references.some((reference) => reference.name === name)) {
        references.push({ name, value: found });
      }
      return found;
    }),
  );
  return { value, secrets, references, errors };
}

/**
 * The names the strings of `raw` use as `${NAME}`, each once, in order of first use (a `$${`
 * is no reference, and `labels` are data): what `interpolate` would look up. `path` is where
 * `raw` sits in a poller's config, for a part of one.
 */
export function referencedNames(raw: unknown, path = ''): string[] {
  const names = new Set<string>();
  mapStrings(
    raw,
    (text) => {
      for (const match of text.matchAll(TOKEN)) if (match[1] !== undefined) names.add(match[1]);
      return text;
    },
    path,
  );
  return [...names];
}

/** A copy of `node` with `change` applied to each string, given its key; labels untouched. */
function mapStrings(node: unknown, change: (text: string, at: string) => string, at = ''): unknown {
  if (typeof node === 'string') return change(node, at);
  if (Array.isArray(node))
    return node.map((item, index) => mapStrings(item, change, `${at}[${index}]`));
  if (node !== null && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([key, item]) => {
        if (at === '' && DATA_KEYS.has(key)) return [key, item];
        return [key, mapStrings(item, change, at ? `${at}.${key}` : key)];
      }),
    );
  }
  return node;
}

/**
 * Text as its template: each secret value back to the `${NAME}` it came from (longest first,
 * as written and as URL-encoded), and a literal `${NAME}` (written `$${NAME}`) escaped again.
 * For config error messages, which echo what they were given; applying it twice changes
 * nothing more.
 */
export function asTemplate(text: string, references: readonly Reference[]): string {
  let out = text;
  const longestFirst = [...references].sort((a, b) => b.value.length - a.value.length);
  for (const { name, value } of longestFirst) {
    if (value.length === 0) continue;
    for (const form of new Set([value, encodeURIComponent(value)])) {
      out = out.split(form).join(`\${${name}}`);
    }
  }
  // Escaped after the values are gone, so no part of a secret is ever kept from matching.
  const names = new Set(references.map((reference) => reference.name));
  return escapeLiterals(out, names);
}

/**
 * Builds text from the config's template instead of its values: `raw` is interpolated with a
 * token per `${NAME}` (letters and digits only, so no URL encoding or case folding changes it),
 * `build` makes the text (a URL, say), and each token becomes `${NAME}` again, while a literal
 * `${NAME}` (written `$${NAME}`) is shown escaped: a `${NAME}` shown is always a secret. No
 * encoding of a secret value can then leak, because the value was never there.
 */
export function fromTemplate<T>(
  raw: unknown,
  references: readonly Reference[],
  build: (tokenized: unknown) => T,
): { value: T; show: (text: string) => string } {
  const tokens = references.map((reference, index) => ({
    name: reference.name,
    token: `tmref${index}secretx`,
  }));
  const env = Object.fromEntries(tokens.map(({ name, token }) => [name, token]));
  const value = build(interpolate(raw, env).value);
  const show = (text: string) =>
    tokens.reduce(
      (out, { name, token }) => out.split(token).join(`\${${name}}`),
      escapeLiterals(text, new Set()),
    );
  return { value, show };
}

/** Each `${NAME}` that is not one of `references` written as `$${NAME}`; a `$${` stays. */
function escapeLiterals(text: string, references: ReadonlySet<string>): string {
  return text.replace(TOKEN, (whole, name: string | undefined) =>
    name === undefined || references.has(name) ? whole : `$${whole}`,
  );
}

/**
 * Replaces every occurrence of a secret in `text` with "***": as written, as it appears
 * once encoded into a URL (percent-encoded; as the URL parser writes a path or a query, which
 * leaves some characters as they are; form-encoded in a query string), and inside a JSON
 * string (a request body an upstream echoes back), as JavaScript writes one and as PHP's
 * json_encode does (`/` as `\/`, non-ASCII as `\uXXXX`).
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = redactAs(out, secret, '***');
  return out;
}

/** `text` with every form of `secret` (as `redact` finds them) written as `shown` instead. */
export function redactAs(text: string, secret: string, shown: string): string {
  if (secret.length < 3) return text;
  let out = text;
  for (const form of formsOf(secret)) out = out.split(form).join(shown);
  return out;
}

/** The ways `secret` can be written in text an upstream or a URL parser gave back. */
function formsOf(secret: string): Set<string> {
  const json = JSON.stringify(secret).slice(1, -1);
  const forms = new Set([
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ s: secret }).toString().slice(2),
    json,
    json.replaceAll('/', '\\/'),
  ]);
  for (const hex of [
    (code: number) => code.toString(16),
    (code: number) => code.toString(16).toUpperCase(),
  ]) {
    const ascii = json.replace(
      /[^\x20-\x7e]/g,
      (char) => `\\u${hex(char.charCodeAt(0)).padStart(4, '0')}`,
    );
    forms.add(ascii);
    forms.add(ascii.replaceAll('/', '\\/'));
  }
  // As `new URL` writes it in a path or a query: `{`, `}`, space and `"` percent-encoded,
  // `|` and `^` not. Only a form that holds the whole secret: a `?` or `#` would end it, and
  // a path drops `.` segments and turns `\` into `/` (a shorter form would hide other text).
  const url = (text: string) => {
    try {
      return new URL(`http://x/${text}`);
    } catch {
      return null;
    }
  };
  const path = /[?#\\]/.test(secret) ? undefined : url(secret)?.pathname.slice(1);
  if (path !== undefined && path.length >= secret.length) forms.add(path);
  const query = secret.includes('#') ? undefined : url(`?${secret}`)?.search.slice(1);
  if (query !== undefined && query.length >= secret.length) forms.add(query);
  forms.delete('');
  return forms;
}
