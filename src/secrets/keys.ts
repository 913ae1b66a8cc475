import { type SecretKeys, SecretsKey } from './crypto.ts';
import { SecretsKeyError } from './errors.ts';

export type { SecretKeys } from './crypto.ts';

export type SecretKeysResult =
  | { ok: true; keys: SecretKeys }
  | { ok: false; error: SecretsKeyError };

/**
 * The keys from the Worker's secrets: SECRETS_KEY seals, and SECRETS_KEY_PREVIOUS (optional,
 * during a rotation) also opens. Either one set but weak is an error naming the variable;
 * a previous key equal to the current one is ignored.
 */
export function secretKeysFrom(env: {
  SECRETS_KEY?: string;
  SECRETS_KEY_PREVIOUS?: string;
}): SecretKeysResult {
  try {
    const current = new SecretsKey(env.SECRETS_KEY, 'SECRETS_KEY');
    const old = env.SECRETS_KEY_PREVIOUS;
    if (typeof old !== 'string' || old.trim() === '' || old.trim() === env.SECRETS_KEY?.trim()) {
      return { ok: true, keys: { current } };
    }
    return { ok: true, keys: { current, previous: new SecretsKey(old, 'SECRETS_KEY_PREVIOUS') } };
  } catch (error) {
    if (error instanceof SecretsKeyError) return { ok: false, error };
    throw error;
  }
}
