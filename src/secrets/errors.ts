/**
 * The typed errors of per-poller secrets. Their messages and fields name variables, secret
 * names and key ids (fingerprints), never a secret's value or a key.
 */

/** The two Worker secrets a poller's secrets are encrypted under. */
export type SecretsKeyVariable = 'SECRETS_KEY' | 'SECRETS_KEY_PREVIOUS';

/** Why a SECRETS_KEY cannot be used. */
export type SecretsKeyProblem = 'missing' | 'too_short' | 'not_random';

/** The fewest characters a SECRETS_KEY may have, surrounding whitespace aside. */
export const MIN_SECRETS_KEY_LENGTH = 32;

/** The fewest distinct characters: "aaaa…" or "0000…" passes on length alone. */
export const MIN_SECRETS_KEY_DISTINCT = 8;

const HOW = `use ${MIN_SECRETS_KEY_LENGTH} random bytes or more, e.g. \`openssl rand -base64 32 | wrangler secret put SECRETS_KEY\` (or a line in .dev.vars locally)`;

/** SECRETS_KEY (or SECRETS_KEY_PREVIOUS) is missing or too weak to encrypt under. */
export class SecretsKeyError extends Error {
  override readonly name = 'SecretsKeyError';
  constructor(
    readonly variable: SecretsKeyVariable,
    readonly problem: SecretsKeyProblem,
  ) {
    super(keyMessage(variable, problem));
  }
}

function keyMessage(variable: SecretsKeyVariable, problem: SecretsKeyProblem): string {
  switch (problem) {
    case 'missing':
      return `${variable} is not set: per-poller secrets are encrypted under it; ${HOW}`;
    case 'too_short':
      return `${variable} is shorter than ${MIN_SECRETS_KEY_LENGTH} characters; ${HOW}`;
    case 'not_random':
      return `${variable} has fewer than ${MIN_SECRETS_KEY_DISTINCT} distinct characters, so it is not random; ${HOW}`;
  }
}

/** One secret that no configured key decrypts, and the key it says it was encrypted under. */
export interface DecryptFailure {
  name: string;
  key_id: string;
  /** `unknown_key`: sealed under a key that is not configured; `rejected`: a configured key
   * did not authenticate it (altered, or copied from another poller or name). */
  reason: 'unknown_key' | 'rejected';
}

/** A configured key, by variable and fingerprint: what an operator compares key ids with. */
export interface KeyFingerprint {
  variable: SecretsKeyVariable;
  key_id: string;
}

/** Stored secrets that none of the configured keys decrypts. */
export class SecretDecryptError extends Error {
  override readonly name = 'SecretDecryptError';
  constructor(
    readonly failures: readonly DecryptFailure[],
    readonly keys: readonly KeyFingerprint[],
  ) {
    super(decryptMessage(failures, keys));
  }
}

function decryptMessage(
  failures: readonly DecryptFailure[],
  keys: readonly KeyFingerprint[],
): string {
  const configured = keys.map((key) => `${key.variable} is key ${key.key_id}`).join(', ');
  const each = failures.map(({ name, key_id, reason }) =>
    reason === 'unknown_key'
      ? `secret ${name} was encrypted under key ${key_id}, which is not configured (${configured}): if SECRETS_KEY was rotated, set SECRETS_KEY_PREVIOUS to the old key; otherwise set the secret again`
      : `secret ${name} (key ${key_id}) does not decrypt: it was altered, or copied from another poller or name; set it again`,
  );
  return each.join('; ');
}

/** True for the errors of this module, whose messages are safe to show and log. */
export function isSecretsError(error: unknown): error is SecretsKeyError | SecretDecryptError {
  return error instanceof SecretsKeyError || error instanceof SecretDecryptError;
}
