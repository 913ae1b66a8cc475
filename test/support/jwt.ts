/**
 * An RSA key pair for `jwt_bearer` tests, made with WebCrypto, and what a provider's token
 * endpoint does with an assertion: check its RS256 signature with the public key, then read
 * its claims. Independent of the library the poller signs with.
 */

/** A fresh RS256 key pair: the private key as a PKCS#8 PEM (what a user configures), the public key to verify with. */
export async function rsaKeyPair(): Promise<{ pem: string; publicKey: CryptoKey }> {
  const pair = (await crypto.subtle.generateKey(
    {
      name: 'RSASSA-PKCS1-v1_5',
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: 'SHA-256',
    },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair;
  const der = new Uint8Array(
    (await crypto.subtle.exportKey('pkcs8', pair.privateKey)) as ArrayBuffer,
  );
  let binary = '';
  for (const byte of der) binary += String.fromCharCode(byte);
  const body = btoa(binary)
    .replace(/(.{64})/g, '$1\n')
    .trim();
  return {
    pem: `-----BEGIN PRIVATE KEY-----\n${body}\n-----END PRIVATE KEY-----\n`,
    publicKey: pair.publicKey,
  };
}

function fromBase64Url(text: string): Uint8Array {
  const base64 = text.replaceAll('-', '+').replaceAll('_', '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(binary, (char) => char.charCodeAt(0));
}

/** The header and claims of an RS256 JWT whose signature `publicKey` verifies; null otherwise. */
export async function verifiedClaims(
  jwt: string,
  publicKey: CryptoKey,
): Promise<{ header: Record<string, unknown>; claims: Record<string, unknown> } | null> {
  const [head, payload, signature] = jwt.split('.');
  if (head === undefined || payload === undefined || signature === undefined) return null;
  const valid = await crypto.subtle.verify(
    'RSASSA-PKCS1-v1_5',
    publicKey,
    fromBase64Url(signature),
    new TextEncoder().encode(`${head}.${payload}`),
  );
  if (!valid) return null;
  const decode = (part: string) =>
    JSON.parse(new TextDecoder().decode(fromBase64Url(part))) as Record<string, unknown>;
  return { header: decode(head), claims: decode(payload) };
}
