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
  const content = new TextEncoder().encode(`${id}.${timestampSeconds}.${body}`);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, content));
  return `v1,${btoa(String.fromCharCode(...mac))}`;
}

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

/** True when the secret can be used for signing (decodes as base64). */
export function isValidSigningSecret(secret: string): boolean {
  try {
    return secretBytes(secret).length > 0;
  } catch {
    return false;
  }
}
