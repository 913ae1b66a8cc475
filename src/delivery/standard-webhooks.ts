/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `${id}.${timestamp}.${body}` with the secret's base64 bytes (after the "whsec_" prefix),
 * sent as `webhook-signature: v1,<base64>`.
 */
export async function signWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<string> {
  const key = await signingKey(secret);
  const content = encoder.encode(`${id}.${timestampSeconds}.${body}`);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, content));
  return `v1,${btoa(String.fromCharCode(...mac))}`;
}

const encoder = new TextEncoder();

/** Imported once per secret: importing an HMAC key on every request is measurable work. */
const keys = new Map<string, Promise<CryptoKey>>();

function signingKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey(
      'raw',
      secretBytes(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    keys.set(secret, key);
  }
  return key;
}

/** The secret's key bytes: base64 after "whsec_"; a secret without the prefix is base64 too. */
function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  const binary = atob(encoded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * The fewest key bytes a signing secret may have. Standard Webhooks asks for 24 to 64 random
 * bytes; a shorter HMAC key (`whsec_AA==` is one byte) can be brute-forced offline from one
 * signed request, and then anyone can forge deliveries.
 */
export const MIN_SECRET_BYTES = 24;

/** Why the secret cannot sign (not base64, or too short), or undefined when it can. Never quotes it. */
export function signingSecretProblem(secret: string): string | undefined {
  let bytes: number;
  try {
    bytes = secretBytes(secret).length;
  } catch {
    return 'not a Standard Webhooks secret ("whsec_" + base64)';
  }
  if (bytes < MIN_SECRET_BYTES) {
    return `decodes to fewer than ${MIN_SECRET_BYTES} bytes: use "whsec_" + base64 of at least ${MIN_SECRET_BYTES} random bytes (e.g. whsec_$(openssl rand -base64 32))`;
  }
  return undefined;
}

/** Keys up to this long go out as `webhook-id` as they are; a longer one is hashed. */
const MAX_PLAIN_ID = 200;
/** Visible ASCII: what a header carries byte for byte to every verifier. */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

/**
 * The `webhook-id` of one record's delivery, derived from its idempotency key: the key
 * itself when it is short visible ASCII (an id of letters, digits and punctuation),
 * otherwise `msg_` + 32 hex digits of its SHA-256. A raw UTF-8, control or 10 kB id in a
 * header is mangled or refused on the way, the signature over it fails, and a receiver
 * answering 401 would stall the poller on that one record. Stable: a retry sends the same
 * id. (The body's `idempotency_key` stays the readable key.)
 */
export async function webhookId(key: string): Promise<string> {
  if (key.length <= MAX_PLAIN_ID && HEADER_SAFE.test(key)) return key;
  return `msg_${await sha256Hex(key)}`;
}

/** The first 16 bytes of the SHA-256 of `text`, as 32 hex digits. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
  let hex = '';
  for (let i = 0; i < 16; i += 1) hex += HEX[digest[i] ?? 0];
  return hex;
}

/** Every byte as two hex digits. */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
