import type { PollerConfig } from '../config/schema.ts';
import { isoTimeOrNull } from '../engine/iso-time.ts';
import { type AuthView, authKindOf, type TokenState } from '../sources/auth/index.ts';
import type { OAuthTokens } from './store/oauth-tokens.ts';

/**
 * What status shows of a poller's source authentication (null: no source.auth), as its kind
 * says: its type, and for a kind that renews a token (oauth2, jwt_bearer) when the access
 * token expires, the last renewal, the renewals of the last 24 h, the last error and whether
 * the provider refused the refresh token. Never a token.
 */
export function authView(
  config: PollerConfig | undefined,
  table: OAuthTokens,
  now: number,
): AuthView | null {
  const auth = config?.source.auth;
  if (auth === undefined) return null;
  return authKindOf(auth).view(auth, () => tokenState(table, now));
}

/** What oauth_tokens says of the poller's renewed token. */
function tokenState(table: OAuthTokens, now: number): TokenState {
  const row = table.row();
  const refused = row?.refused_for !== null && row?.refused_for !== undefined;
  return {
    state: refused ? 'reconnect_needed' : 'ok',
    token_expires_at: isoTimeOrNull(row?.expires_at),
    last_renewal_at: isoTimeOrNull(row?.last_renewal_at),
    renewals_24h: table.renewals(now).length,
    last_error:
      row?.last_error && row.last_error_at !== null
        ? { at: isoTimeOrNull(row.last_error_at) ?? '', message: row.last_error }
        : null,
  };
}

/** The alert of a poller whose provider refused its refresh token: a person must reconnect it. */
export function reconnectAlert(name: string, view: AuthView | null): string | null {
  if (view?.state !== 'reconnect_needed') return null;
  const why = view.last_error?.message ?? 'the provider refused the refresh token';
  return `reconnect needed: poller "${name}" has no working refresh token (${why}); give it a new one`;
}
