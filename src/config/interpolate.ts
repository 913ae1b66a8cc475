/** `${NAME}` references to a secret or var inside a config string. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export interface Interpolated {
  value: unknown;
  /** Values substituted for `${NAME}`: they are secrets and must be redacted wherever shown. */
  secrets: string[];
  /** One message per missing variable, with the path where it was used. Never a value. */
  errors: string[];
}

/**
 * Replaces every `${NAME}` in the strings of `raw` with `env[NAME]`. A missing or non-string
 * variable is an error naming the variable and the key, so a typo never reaches the upstream.
 */
export function interpolate(raw: unknown, env: Record<string, unknown>, path = ''): Interpolated {
  const secrets: string[] = [];
  const errors: string[] = [];
  const walk = (node: unknown, at: string): unknown => {
    if (typeof node === 'string') {
      return node.replace(REFERENCE, (whole, name: string) => {
        const value = env[name];
        if (typeof value !== 'string' || value === '') {
          errors.push(
            `${at}: \${${name}} is not set (run \`wrangler secret put ${name}\`, or add it to .dev.vars locally)`,
          );
          return whole;
        }
        secrets.push(value);
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
  return { value: walk(raw, path), secrets, errors };
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
