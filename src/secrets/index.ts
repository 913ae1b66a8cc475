/** Per-poller secrets: sealed in the poller's storage under SECRETS_KEY, never shown. */

export type { SealedSecret } from './crypto.ts';
export { decryptSecret, deriveKey, encryptSecret, fingerprints, SecretsKey } from './crypto.ts';
export type { DecryptFailure, KeyFingerprint } from './errors.ts';
export {
  isSecretsError,
  MIN_SECRETS_KEY_LENGTH,
  SecretDecryptError,
  SecretsKeyError,
} from './errors.ts';
export type { KeyRole, KeyRoleCounts } from './key-role.ts';
export { configuredKeys, countKeyRoles, keyRole } from './key-role.ts';
export type { SecretKeys, SecretKeysResult } from './keys.ts';
export { secretKeysFrom } from './keys.ts';
export {
  MAX_SECRET_VALUE_BYTES,
  MAX_SECRETS_PER_POLLER,
  MIN_NUDGE_TOKEN_BYTES,
  RESERVED_SECRET_NAMES,
  secretNameProblem,
} from './names.ts';
export type { PutSecretResult, SecretListing, SecretOrigins } from './store.ts';
export { PollerSecrets } from './store.ts';
