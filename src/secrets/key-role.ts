import { fingerprints } from './crypto.ts';
import type { KeyFingerprint } from './errors.ts';
import { secretKeysFrom } from './keys.ts';

/**
 * Which of the Worker's keys a stored secret is sealed under: SECRETS_KEY (`current`),
 * SECRETS_KEY_PREVIOUS (`previous`: a rotation has not moved it yet), or neither (`unknown`:
 * it will not decrypt until the key it was sealed under is set again). What makes a rotation
 * verifiable: SECRETS_KEY_PREVIOUS may go once no secret is `previous`.
 */
export type KeyRole = 'current' | 'previous' | 'unknown';

/** How many secrets are sealed under each key. */
export type KeyRoleCounts = Record<KeyRole, number>;

/** The role of the key a `key_id` (a fingerprint) names, among the configured keys. */
export function keyRole(keyId: string, configured: readonly KeyFingerprint[]): KeyRole {
  const variable = configured.find((key) => key.key_id === keyId)?.variable;
  if (variable === 'SECRETS_KEY') return 'current';
  if (variable === 'SECRETS_KEY_PREVIOUS') return 'previous';
  return 'unknown';
}

/** The fingerprints of the keys an env configures; none when SECRETS_KEY is missing or weak. */
export async function configuredKeys(env: {
  SECRETS_KEY?: string;
  SECRETS_KEY_PREVIOUS?: string;
}): Promise<KeyFingerprint[]> {
  const keys = secretKeysFrom(env);
  return keys.ok ? fingerprints(keys.keys) : [];
}

/** How many of `keyIds` each key holds. */
export function countKeyRoles(
  keyIds: readonly string[],
  configured: readonly KeyFingerprint[],
): KeyRoleCounts {
  const counts: KeyRoleCounts = { current: 0, previous: 0, unknown: 0 };
  for (const keyId of keyIds) counts[keyRole(keyId, configured)] += 1;
  return counts;
}
