import * as z from 'zod';
import { credentialForms } from '../../config/credential-forms.ts';
import type { Authorizer } from './authorizer.ts';
import { type AuthKind, type AuthTools, headerClash } from './kind.ts';
import { basicHeader } from './static-auth.ts';
import {
  fingerprintOf,
  once,
  type StoredTokens,
  type TokenAnswer,
  TokenAuthorizer,
  type TokenEndpoint,
  type TokenVault,
} from './token-authorizer.ts';

export type { StoredTokens, TokenVault } from './token-authorizer.ts';

const config = z.strictObject({
  type: z.literal('oauth2'),
  /** refresh_token (default) or client_credentials. */
  grant: z.enum(['refresh_token', 'client_credentials']).default('refresh_token'),
  /** The provider's token endpoint. */
  token_url: z.url({ protocol: /^https?$/ }),
  client_id: z.string().min(1),
  /** Use ${SECRET}. */
  client_secret: z.string().min(1).optional(),
  /** With grant = "refresh_token": the refresh token to start from; use ${SECRET}. */
  refresh_token: z.string().min(1).optional(),
  /** Optional scope to ask for. */
  scope: z.string().min(1).optional(),
  /** basic (client_secret_basic, default) or body (client_secret_post). */
  client_auth: z.enum(['basic', 'body']).default('basic'),
});

export type OAuth2Config = z.output<typeof config>;

/**
 * `type = "oauth2"`: a short-lived access token from the provider's token endpoint, renewed
 * from the refresh token (grant = "refresh_token") or as the client (grant =
 * "client_credentials"), cached and renewed by TokenAuthorizer. Tokens are bound to the token
 * endpoint, source origin, client id and configured refresh token they were obtained for
 * (R18). A provider that refuses the refresh token (invalid_grant) puts the poller in
 * "reconnect needed" until that changes.
 */
export const oauth2 = {
  config,
  example:
    'auth = { type = "oauth2", token_url = "https://login.example.com/oauth/token", client_id = "tidemark", client_secret = "${CLIENT_SECRET}", refresh_token = "${REFRESH_TOKEN}" }',
  summary: 'oauth2: an access token from the provider, renewed when needed',
  renews: true,
  toUpstream: false,
  problems(auth, source) {
    const problems = headerClash('authorization', source);
    if (auth.grant === 'refresh_token' && !auth.refresh_token) {
      problems.push({
        path: ['auth', 'refresh_token'],
        message:
          'is required with grant = "refresh_token" (use ${SECRET}: the poller\'s own secret)',
      });
    }
    if (auth.grant === 'client_credentials' && !auth.client_secret) {
      problems.push({
        path: ['auth', 'client_secret'],
        message: 'is required with grant = "client_credentials"',
      });
    }
    return problems;
  },
  // The token endpoint is sent the client's secret and its refresh token.
  reach: (auth) => [{ what: 'url', key: 'source.auth.token_url', url: auth.token_url }],
  view: (_auth, tokens) => ({ type: 'oauth2', ...tokens() }),
  authorizer(auth, tools) {
    const vault = tools.vault();
    if (vault === null) return noVault('oauth2');
    return new OAuth2Authorizer(auth, vault, tools);
  },
} satisfies AuthKind<OAuth2Config>;

/** Why a kind that keeps its tokens sealed cannot run without SECRETS_KEY. */
export function noVault(type: string): string {
  return `source.auth: ${type} keeps its tokens sealed under SECRETS_KEY, which is not set (see "Per-poller secrets")`;
}

/** The oauth2 authorizer: TokenAuthorizer with the refresh_token or client_credentials grant. */
export class OAuth2Authorizer extends TokenAuthorizer implements Authorizer {
  constructor(
    auth: OAuth2Config,
    vault: TokenVault,
    tools: Pick<AuthTools, 'tokenEndpoint' | 'secrets' | 'now' | 'origin' | 'reconnect'>,
  ) {
    const token = auth.refresh_token;
    super(
      {
        binding: once(() => bindingOf(auth, tools.origin)),
        lineage: once(async () => (token === undefined ? null : fingerprintOf(token))),
        // The provider's rotated token: the stored tokens descend from the configured one (their
        // binding has its fingerprint), so a new configured token (a reconnect) starts anew.
        refreshOf: (stored: StoredTokens) =>
          auth.grant === 'client_credentials' ? null : (stored.refresh ?? token ?? null),
        ask: (refresh, secrets) => requestToken(auth, refresh, tools.tokenEndpoint, secrets),
        reconnect: tools.reconnect,
      },
      vault,
      tools,
    );
  }
}

/**
 * Asks the token endpoint for an access token: with `refreshToken` (grant = "refresh_token"),
 * or as the client (grant = "client_credentials"). The client authenticates with HTTP Basic
 * (client_auth = "basic", RFC 6749 §2.3.1) or in the body ("body").
 */
function requestToken(
  auth: OAuth2Config,
  refreshToken: string | null,
  tokenEndpoint: TokenEndpoint,
  secrets: readonly string[],
): Promise<TokenAnswer> {
  const form = new URLSearchParams();
  form.set('grant_type', auth.grant);
  if (auth.grant === 'refresh_token' && refreshToken !== null)
    form.set('refresh_token', refreshToken);
  if (auth.scope !== undefined) form.set('scope', auth.scope);
  const headers: Record<string, string> = {};
  if (auth.client_auth === 'basic' && auth.client_secret !== undefined) {
    headers.authorization = basicHeader(
      encodeURIComponent(auth.client_id),
      encodeURIComponent(auth.client_secret),
    );
  } else {
    form.set('client_id', auth.client_id);
    if (auth.client_secret !== undefined) form.set('client_secret', auth.client_secret);
  }
  return tokenEndpoint(auth.token_url, form, headers, [
    ...secrets,
    ...(refreshToken === null ? [] : [refreshToken]),
    // The client's Basic header, in case the endpoint echoes it: base64 of id:secret.
    ...(headers.authorization === undefined ? [] : credentialForms(headers.authorization)),
  ]);
}

/**
 * A fingerprint of what tokens are obtained for: the token endpoint, the origin the access
 * token goes to, the client, and the configured refresh token (its own fingerprint: never
 * the token). Stored with the tokens, never a secret.
 */
export async function bindingOf(auth: OAuth2Config, origin: string): Promise<string> {
  const token = auth.refresh_token;
  const refresh = token === undefined ? null : await fingerprintOf(token);
  return fingerprintOf(JSON.stringify([auth.token_url, origin, auth.client_id, refresh]));
}
