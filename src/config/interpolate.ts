/** The keys that seal per-poller secrets: never interpolated into a request. */
const KEYS_NEVER_SENT = new Set(['SECRETS_KEY', 'SECRETS_KEY_PREVIOUS']);

/** `${NAME}` references to a secret or var inside a config string. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

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

/**
 * Replaces every `${NAME}` in the strings of `raw` with `env[NAME]`. A missing or non-string
 * variable is an error naming the variable and the key, so a typo never reaches the upstream.
 */
export function interpolate(raw: unknown, env: Record<string, unknown>, path = ''): Interpolated {
  const secrets: string[] = [];
  const references: Reference[] = [];
  const errors: string[] = [];
  const walk = (node: unknown, at: string): unknown => {
    if (typeof node === 'string') {
      return node.replace(REFERENCE, (whole, name: string) => {
        if (KEYS_NEVER_SENT.has(name)) {
          errors.push(
            `${at}: \${${name}} cannot be used in a config: it would send the key that seals every poller's secrets`,
          );
          return whole;
        }
        const value = env[name];
        if (typeof value !== 'string' || value === '') {
          errors.push(
            `${at}: \${${name}} is not set (run \`wrangler secret put ${name}\`, or add it to .dev.vars locally)`,
          );
          return whole;
        }
        secrets.push(value);
        if (!references.some((reference) => reference.name === name)) {
          references.push({ name, value });
        }
        return value;
      });
    }
    if (Array.isArray(node)) return node.map((item, index) => walk(item, `${at}[${index}]`));
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(
        Object.entries(node).map(([key, item]) => [key, walk(item, at ? `${at}.${key}` : key)]),
      );
    }
    return node;
  };
  return { value: walk(raw, path), secrets, references, errors };
}

/**
 * Text as its template: each secret value back to the `${NAME}` it came from (longest first,
 * as written and as URL-encoded). For config error messages, which echo what they were given.
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
  return out;
}

/**
 * Builds text from the config's template instead of its values: `raw` is interpolated with a
 * token per `${NAME}` (letters and digits only, so no URL encoding or case folding changes it),
 * `build` makes the text (a URL, say), and each token becomes `${NAME}` again. No encoding
 * of a secret value can then leak, because the value was never there.
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
    tokens.reduce((out, { name, token }) => out.split(token).join(`\${${name}}`), text);
  return { value, show };
}

/**
 * Replaces every occurrence of a secret in `text` with "***": as written, and as it appears
 * once encoded into a URL (percent-encoded, or form-encoded in a query string).
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length < 3) continue;
    const forms = new Set([
      secret,
      encodeURIComponent(secret),
      new URLSearchParams({ s: secret }).toString().slice(2),
    ]);
    for (const form of forms) out = out.split(form).join('***');
  }
  return out;
}
