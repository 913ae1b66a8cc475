/**
 * Sealing a poller's secrets with AES-GCM-256, WebCrypto only. Each poller's key is derived
 * from SECRETS_KEY by HKDF-SHA256 with the poller's name in `info`, so a ciphertext copied
 * into another poller's storage does not decrypt there; the secret's name is the additional
 * authenticated data, so one moved to another name does not either.
 */
import {
  type DecryptFailure,
  type KeyFingerprint,
  MIN_SECRETS_KEY_DISTINCT,
  MIN_SECRETS_KEY_LENGTH,
  SecretDecryptError,
  SecretsKeyError,
  type SecretsKeyProblem,
  type SecretsKeyVariable,
} from './errors.ts';

/** Changing any of these makes every stored secret undecryptable: they are part of the format. */
const SALT = utf8('tidemark/poller-secrets/v1');
const POLLER_INFO = 'tidemark/poller-secrets/v1/aes-gcm-256/poller=';
const KEY_ID_INFO = utf8('tidemark/poller-secrets/v1/key-id');
/** 96 bits: the IV length AES-GCM is specified for. */
const IV_BYTES = 12;

/** A secret as stored: base64 ciphertext (with GCM's tag) and IV, and the key's fingerprint. */
export interface SealedSecret {
  ciphertext: string;
  iv: string;
  key_id: string;
}

/** The keys a poller's secrets are sealed under (current) and also opened with (previous). */
export interface SecretKeys {
  readonly current: SecretsKey;
  /** The key before a rotation, accepted for decryption until `reencrypt` has moved every row. */
  readonly previous?: SecretsKey;
}

/**
 * Why `value` cannot be a SECRETS_KEY, or undefined when it can. The key is the UTF-8 text
 * as set, surrounding whitespace aside (a trailing newline from a pipe changes nothing), used
 * as HKDF's input keying material: at least 32 characters, 8 of them distinct.
 */
export function secretsKeyProblem(value: string | undefined): SecretsKeyProblem | undefined {
  const key = typeof value === 'string' ? value.trim() : '';
  if (key === '') return 'missing';
  if (key.length < MIN_SECRETS_KEY_LENGTH) return 'too_short';
  if (new Set(key).size < MIN_SECRETS_KEY_DISTINCT) return 'not_random';
  return undefined;
}

/**
 * A validated SECRETS_KEY. Its text stays in a private field: JSON, string and inspection
 * show only which variable it came from. Derived keys are non-extractable and memoized.
 */
export class SecretsKey {
  readonly #material: Uint8Array<ArrayBuffer>;
  #base: Promise<CryptoKey> | undefined;
  #id: Promise<string> | undefined;
  readonly #perPoller = new Map<string, Promise<CryptoKey>>();

  /** Throws SecretsKeyError when `value` is missing, too short or not random. */
  constructor(
    value: string | undefined,
    readonly variable: SecretsKeyVariable = 'SECRETS_KEY',
  ) {
    const problem = secretsKeyProblem(value);
    if (problem !== undefined) throw new SecretsKeyError(variable, problem);
    this.#material = utf8((value ?? '').trim());
  }

  /** The key's fingerprint, stored with each secret: 8 hex digits, the same for every poller. */
  id(): Promise<string> {
    this.#id ??= this.base()
      .then((base) =>
        crypto.subtle.deriveBits(
          { name: 'HKDF', hash: 'SHA-256', salt: SALT, info: KEY_ID_INFO },
          base,
          32,
        ),
      )
      .then((bits) => hex(new Uint8Array(bits)));
    return this.#id;
  }

  /** The AES-GCM-256 key of one poller. */
  forPoller(poller: string): Promise<CryptoKey> {
    let key = this.#perPoller.get(poller);
    if (key === undefined) {
      key = this.base().then((base) =>
        crypto.subtle.deriveKey(
          { name: 'HKDF', hash: 'SHA-256', salt: SALT, info: utf8(`${POLLER_INFO}${poller}`) },
          base,
          { name: 'AES-GCM', length: 256 },
          false,
          ['encrypt', 'decrypt'],
        ),
      );
      this.#perPoller.set(poller, key);
    }
    return key;
  }

  toJSON(): { variable: SecretsKeyVariable } {
    return { variable: this.variable };
  }

  toString(): string {
    return `[${this.variable}]`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  private base(): Promise<CryptoKey> {
    this.#base ??= crypto.subtle.importKey('raw', this.#material, 'HKDF', false, [
      'deriveKey',
      'deriveBits',
    ]);
    return this.#base;
  }
}

/** The AES-GCM-256 key of `poller` under `secretsKey`. Rejects with SecretsKeyError for a weak key. */
export async function deriveKey(secretsKey: string, poller: string): Promise<CryptoKey> {
  return new SecretsKey(secretsKey).forPoller(poller);
}

/** Seals `value` as secret `name` of `poller` under the current key, with a fresh random IV. */
export async function encryptSecret(
  keys: SecretKeys,
  poller: string,
  name: string,
  value: string,
): Promise<SealedSecret> {
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: utf8(name) },
    await keys.current.forPoller(poller),
    utf8(value),
  );
  return {
    ciphertext: toBase64(new Uint8Array(sealed)),
    iv: toBase64(iv),
    key_id: await keys.current.id(),
  };
}

/**
 * Opens secret `name` of `poller`: with the key its `key_id` names first, then with the
 * others (a fingerprint can collide; GCM's tag decides). Throws SecretDecryptError.
 */
export async function decryptSecret(
  keys: SecretKeys,
  poller: string,
  name: string,
  sealed: SealedSecret,
): Promise<string> {
  const configured = await fingerprints(keys);
  const all = keyList(keys);
  const byId = all.filter((_, index) => configured[index]?.key_id === sealed.key_id);
  const others = all.filter((key) => !byId.includes(key));
  for (const key of [...byId, ...others]) {
    const value = await tryOpen(key, poller, name, sealed);
    if (value !== undefined) return value;
  }
  const failure: DecryptFailure = {
    name,
    key_id: sealed.key_id,
    reason: byId.length > 0 ? 'rejected' : 'unknown_key',
  };
  throw new SecretDecryptError([failure], configured);
}

/** The configured keys' fingerprints, current first: for error messages and status. */
export async function fingerprints(keys: SecretKeys): Promise<KeyFingerprint[]> {
  return Promise.all(
    keyList(keys).map(async (key) => ({ variable: key.variable, key_id: await key.id() })),
  );
}

function keyList(keys: SecretKeys): SecretsKey[] {
  return keys.previous === undefined ? [keys.current] : [keys.current, keys.previous];
}

async function tryOpen(
  key: SecretsKey,
  poller: string,
  name: string,
  sealed: SealedSecret,
): Promise<string | undefined> {
  try {
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: fromBase64(sealed.iv), additionalData: utf8(name) },
      await key.forPoller(poller),
      fromBase64(sealed.ciphertext),
    );
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(plain);
  } catch {
    // Wrong key, altered bytes, bad base64 or IV: all mean "this key does not open it".
    return undefined;
  }
}

function utf8(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text) as Uint8Array<ArrayBuffer>;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
