import type { UpstreamFailureKind } from '../../engine/classify.ts';

/** The Authorization header of the source's next request, or why there is none. */
export type AuthHeader =
  | { ok: true; value: string }
  | { ok: false; kind: UpstreamFailureKind; error: string; retryAfter?: number };

/**
 * How the source authenticates (`source.auth`), one module per `type` (sources/auth/index.ts).
 * The header goes to the source's origin only (HttpSource's redirect rule).
 */
export interface Authorizer {
  /** The header for the next request: a cached token, or one renewed first. */
  header(): Promise<AuthHeader>;
  /**
   * The upstream answered 401 to a request sent with `used`: a renewed header to retry that
   * request with, once; null when there is nothing to renew (the 401 stands).
   */
  renewAfter401(used: string): Promise<AuthHeader | null>;
  /** Values to redact that are not in the config: tokens learned at run time, the header as built. */
  learned(): readonly string[];
}

/** What status shows of a poller's authentication: never a token. */
export interface AuthView {
  type: 'bearer' | 'basic' | 'oauth2';
  /** ok, or reconnect_needed (oauth2: the provider refused the refresh token). */
  state: 'ok' | 'reconnect_needed';
  token_expires_at: string | null;
  last_renewal_at: string | null;
  renewals_24h: number;
  last_error: { at: string; message: string } | null;
}
