import { type CryptoKey, importPKCS8, SignJWT } from 'jose';
import * as z from 'zod';
import { type AuthKind, type AuthTools, headerClash } from './kind.ts';
import { noVault } from './oauth2.ts';
import { fingerprintOf, once, type TokenAnswer, TokenAuthorizer } from './token-authorizer.ts';

/** RFC 7523 §2.1: the grant type of a JWT used as an authorization grant. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/**
 * How long an assertion is good for: Salesforce takes at most 3 minutes, Google an hour.
 * Each renewal signs a new one.
 */
const ASSERTION_LIFE_S = 180;

const config = z.strictObject({
  type: z.literal('jwt_bearer'),
  /** The provider's token endpoint. */
  token_url: z.url({ protocol: /^https?$/ }),
  /** The assertion's `iss`: the client (Salesforce: the consumer key; Google: the service account's email). */
  issuer: z.string({ error: 'is required when source.auth.type = "jwt_bearer"' }).min(1),
  /** Optional `sub`: the user the token acts for (Salesforce: the username; Google: a user, for domain-wide delegation). */
  subject: z.string().min(1).optional(),
  /** The assertion's `aud` (Salesforce: https://login.salesforce.com; Google: the token_url). */
  audience: z.string({ error: 'is required when source.auth.type = "jwt_bearer"' }).min(1),
  /** Optional scope, as a claim of the assertion and a parameter of the form (Google reads the claim). */
  scope: z.string().min(1).optional(),
  /** The PKCS#8 PEM private key ("-----BEGIN PRIVATE KEY-----") the assertion is signed with (RS256); use ${SECRET}. */
  private_key: z.string({ error: 'is required when source.auth.type = "jwt_bearer"' }).min(1),
});

type JwtBearerConfig = z.output<typeof config>;

/**
 * `type = "jwt_bearer"` (RFC 7523 §2.1): an access token from the token endpoint, asked for
 * with an assertion this poller signs (RS256, WebCrypto through jose) with its private key:
 * Google service accounts, Salesforce's JWT bearer flow. The token is cached, stored sealed
 * and renewed as oauth2's is (TokenAuthorizer); there is no refresh token, so a provider that
 * refuses the assertion is a configuration error (the slow retry), never "reconnect needed".
 */
export const jwtBearer = {
  config,
  example:
    'auth = { type = "jwt_bearer", token_url = "https://oauth2.googleapis.com/token", issuer = "sync@project.iam.gserviceaccount.com", audience = "https://oauth2.googleapis.com/token", scope = "https://www.googleapis.com/auth/calendar.readonly", private_key = "${GOOGLE_PRIVATE_KEY}" }',
  summary:
    'jwt_bearer: an access token for an assertion signed with the private key, renewed when needed',
  renews: true,
  toUpstream: false,
  problems: (_auth, source) => headerClash('authorization', source),
  // The token endpoint is sent the assertions the private key signs.
  reach: (auth) => [{ what: 'url', key: 'source.auth.token_url', url: auth.token_url }],
  view: (_auth, tokens) => ({ type: 'jwt_bearer', ...tokens(), state: 'ok' }),
  authorizer(auth, tools) {
    const vault = tools.vault();
    if (vault === null) return noVault('jwt_bearer');
    const key = once(() => importKey(auth.private_key));
    return new TokenAuthorizer(
      {
        binding: once(() => bindingOf(auth, tools.origin)),
        lineage: async () => null,
        refreshOf: () => null,
        ask: (_refresh, secrets) => askWithAssertion(auth, key, tools, secrets),
        reconnect: '',
      },
      vault,
      tools,
    );
  },
} satisfies AuthKind<JwtBearerConfig>;

/** The private key, or why it is not one: a PEM as a secret often has its newlines as `\n`. */
async function importKey(pem: string): Promise<CryptoKey | string> {
  try {
    return await importPKCS8(pem.replaceAll('\\n', '\n').trim(), 'RS256');
  } catch {
    return 'source.auth.private_key is not a PKCS#8 PEM private key ("-----BEGIN PRIVATE KEY-----"; an RSA key in "BEGIN RSA PRIVATE KEY" form converts with `openssl pkcs8 -topk8 -nocrypt`)';
  }
}

/** Signs a fresh assertion and asks the token endpoint for an access token with it. */
async function askWithAssertion(
  auth: JwtBearerConfig,
  key: () => Promise<CryptoKey | string>,
  tools: AuthTools,
  secrets: readonly string[],
): Promise<TokenAnswer> {
  const signer = await key();
  if (typeof signer === 'string') return { ok: false, kind: 'misconfigured', error: signer };
  const now = Math.floor(tools.now() / 1000);
  const claims = new SignJWT(auth.scope === undefined ? {} : { scope: auth.scope })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
    .setIssuer(auth.issuer)
    .setAudience(auth.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + ASSERTION_LIFE_S)
    .setJti(crypto.randomUUID());
  if (auth.subject !== undefined) claims.setSubject(auth.subject);
  const assertion = await claims.sign(signer);
  const form = new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion });
  if (auth.scope !== undefined) form.set('scope', auth.scope);
  // The assertion is a credential for its few minutes: an endpoint that echoes it shows none.
  const answer = await tools.tokenEndpoint(auth.token_url, form, {}, [...secrets, assertion]);
  if (answer.ok || answer.kind !== 'reconnect') return answer;
  // invalid_grant: the assertion was refused (a key the provider does not know for this
  // issuer, a user who did not approve the app, a clock minutes off): no refresh token to
  // give again, the config or the provider's setup must change.
  return {
    ok: false,
    kind: 'misconfigured',
    error: `${answer.error} (the provider refused the assertion: check issuer, subject, audience and that private_key is the key registered for the issuer)`,
  };
}

/**
 * A fingerprint of what tokens are obtained for: the token endpoint, the origin the access
 * token goes to, the assertion's claims and the private key (its own fingerprint). Stored
 * with the tokens, never a secret: tokens of another config are no tokens (R18).
 */
async function bindingOf(auth: JwtBearerConfig, origin: string): Promise<string> {
  const { token_url, issuer, subject, audience, scope } = auth;
  const key = await fingerprintOf(auth.private_key);
  return fingerprintOf(
    JSON.stringify(['jwt_bearer', token_url, origin, issuer, subject, audience, scope, key]),
  );
}
