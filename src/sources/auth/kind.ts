import type * as z from 'zod';
import type { Reached } from '../../config/reach.ts';
import type { Authorizer, AuthView } from './authorizer.ts';
import type { TokenEndpoint, TokenVault } from './token-authorizer.ts';

/**
 * What every kind of source.auth may need to build its authorizer. A kind's module stays
 * pure (the config schema, and so check-config in plain Node, loads it): what sends
 * requests is given to it here.
 */
export interface AuthTools {
  /** Asks a token endpoint (within source.timeout, its rate limits held to max_rate_limit_wait). */
  tokenEndpoint: TokenEndpoint;
  /** The poller's token storage: only kinds that renew a token ask for it (null: SECRETS_KEY is not set). */
  vault: () => TokenVault | null;
  now: () => number;
  secrets: readonly string[];
  /** source.url's origin: where the credential goes (a renewed token is bound to it, R18). */
  origin: string;
  /** What gives the poller a new oauth2 refresh token, for "reconnect needed". */
  reconnect: string;
}

/** What of `source` a kind's config rules look at. */
export interface AuthSource {
  headers: Record<string, string>;
  params: Record<string, string>;
}

/** Something a kind cannot work with, at a path under `source`. */
export interface AuthProblem {
  path: string[];
  message: string;
}

/** What the poller's storage says of a renewed token (oauth_tokens), for status: never a token. */
export type TokenState = Omit<AuthView, 'type'>;

/**
 * One kind of `source.auth`: how the source authenticates. Every kind is one module
 * (src/sources/auth/<name>.ts) registered in auth/index.ts; the shared case suite
 * (test/engine/auth-kinds.test.ts) runs the same cases against each.
 */
export interface AuthKind<C extends { type: string }> {
  /** Its `source.auth` table: a strict zod object whose `type` is the kind's name. */
  readonly config: z.ZodType<C>;
  /** The `auth = { … }` line docs/configuration.md's "Auth kinds" shows (a test checks it is there and valid). */
  readonly example: string;
  /** What it does, in words (the dashboard's Authentication section). */
  readonly summary: string;
  /**
   * It renews a token, kept sealed under SECRETS_KEY in the poller's storage (oauth_tokens):
   * status shows the token's state, and the poller needs SECRETS_KEY.
   */
  readonly renews: boolean;
  /**
   * Its values go with every request to source.url's origin (a static credential); false:
   * only to the endpoints of its `reach` (a token endpoint), whose answer is what the
   * upstream is sent (R18: where its secrets are bound).
   */
  readonly toUpstream: boolean;
  /** What it cannot work with, in itself or the rest of `source` (config errors). */
  problems(auth: C, source: AuthSource): AuthProblem[];
  /** What it reaches besides source.url (a token endpoint), for FLEET_POLICY (config/fleet-reach.ts). */
  reach(auth: C): Reached[];
  /** What status shows of it; `tokens` reads the stored token's state. */
  view(auth: C, tokens: () => TokenState): AuthView;
  /** Its authorizer, or why it cannot be built. */
  authorizer(auth: C, tools: AuthTools): Authorizer | string;
}

/** The view of a kind with nothing to renew: its type, always ok. */
export function staticView(type: AuthView['type']): AuthView {
  return {
    type,
    state: 'ok',
    token_expires_at: null,
    last_renewal_at: null,
    renewals_24h: 0,
    last_error: null,
  };
}

/** Why a request header the kind sets is set in source.headers too, or none. */
export function headerClash(header: string, source: AuthSource): AuthProblem[] {
  const clash = Object.keys(source.headers).some(
    (name) => name.toLowerCase() === header.toLowerCase(),
  );
  if (!clash) return [];
  return [
    {
      path: ['headers'],
      message: `has ${/^authorization$/i.test(header) ? 'an Authorization' : `a ${header}`} header and source.auth sets one too: keep one of them`,
    },
  ];
}
