/** What a poller's secret may be called and hold. */

/** The same rule as a `${NAME}` reference in the config (config/interpolate.ts). */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Longer names are typos or values pasted into the path. */
export const MAX_SECRET_NAME_LENGTH = 128;

/** A value's UTF-8 size limit: tokens and keys fit; a file does not belong here. */
export const MAX_SECRET_VALUE_BYTES = 8 * 1024;

/**
 * The shortest NUDGE_TOKEN, in UTF-8 bytes: it is the only credential of a public route (and
 * may sit in a URL), so a short, guessable one is refused; `openssl rand -hex 24` gives 48.
 */
export const MIN_NUDGE_TOKEN_BYTES = 16;

/** How many secrets one poller may hold: storage and every run's decryption stay bounded. */
export const MAX_SECRETS_PER_POLLER = 100;

/**
 * The Worker's own configuration: a poller's secret of that name would shadow it wherever
 * the merged env is read, so these stay the Worker's.
 */
export const RESERVED_SECRET_NAMES: ReadonlySet<string> = new Set([
  'POLLERS',
  'SECRETS_KEY',
  'SECRETS_KEY_PREVIOUS',
  'ADMIN_TOKEN',
  'STATUS_TOKEN',
]);

/** Why `name` cannot name a secret, or undefined. Never echoes a refused name: it may be a value. */
export function secretNameProblem(name: string): string | undefined {
  if (name.length > MAX_SECRET_NAME_LENGTH || !SECRET_NAME.test(name)) {
    return `a secret's name is letters, digits and _, does not start with a digit, and has at most ${MAX_SECRET_NAME_LENGTH} characters (the same rule as \${NAME} in the config)`;
  }
  if (RESERVED_SECRET_NAMES.has(name)) {
    return `${name} is the Worker's own setting and cannot be a poller's secret`;
  }
  return undefined;
}

/** Why `value` cannot be a secret's value, or undefined. Never quotes it. */
export function secretValueProblem(value: unknown): 'empty' | 'too_large' | undefined {
  if (typeof value !== 'string' || value === '') return 'empty';
  if (new TextEncoder().encode(value).length > MAX_SECRET_VALUE_BYTES) return 'too_large';
  return undefined;
}
