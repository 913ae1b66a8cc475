import type { UpstreamFailureKind } from '../../engine/classify.ts';

/** Sets a request's credential: a header, a query parameter or a signature; the request as sent. */
export type Authorize = (request: Request) => Promise<Request>;

/**
 * What authorizes the source's next requests, or why there is none. `value` tells one
 * credential from the next (the token, the header as built): a 401 to it asks for another.
 */
export type Credential =
  | { ok: true; value: string; authorize: Authorize }
  | { ok: false; kind: UpstreamFailureKind; error: string; retryAfter?: number };

/**
 * How the source authenticates (`source.auth`), built by the module of its `type`
 * (sources/auth/index.ts). Its credential goes to the source's origin only (HttpSource's
 * redirect rule).
 */
export interface Authorizer {
  /** The credential for the next requests: a cached token, or one renewed first. */
  credential(): Promise<Credential>;
  /**
   * The upstream answered 401 to a request sent with `used` (a credential's value): a renewed
   * credential to send that request again with, once; null when there is nothing to renew
   * (the 401 stands).
   */
  renewAfter401(used: string): Promise<Credential | null>;
  /** Values to redact that are not in the config: tokens learned at run time, each form sent. */
  learned(): readonly string[];
}

/** What status shows of a poller's authentication: never a token. */
export interface AuthView {
  /** The `source.auth.type`. */
  type: string;
  /** ok, or reconnect_needed (oauth2: the provider refused the refresh token). */
  state: 'ok' | 'reconnect_needed';
  token_expires_at: string | null;
  last_renewal_at: string | null;
  renewals_24h: number;
  last_error: { at: string; message: string } | null;
}
