// Owns the oauth_tokens table (source.auth = oauth2).
import { OneAtATime } from '../../sources/auth/one-at-a-time.ts';
import type { StoreHost } from './host.ts';

/** The row of `oauth_tokens`: the sealed tokens, and what status shows (never a token). */
export interface OAuthRow {
  /** JSON of a SealedSecret whose value is `{ access, refresh }` as JSON. */
  sealed: string | null;
  expires_at: number | null;
  issued_at: number | null;
  /** The binding (a fingerprint) the tokens were obtained for; the seal holds it too. */
  refresh_for: string | null;
  last_renewal_at: number | null;
  /** JSON array of the renewals' times in the last 24 hours. */
  renewals: string;
  last_error: string | null;
  last_error_at: number | null;
  /** The binding whose refresh token the provider refused (a fingerprint), if it did. */
  refused_for: string | null;
}

const DAY_MS = 24 * 3_600_000;

/**
 * Owns `oauth_tokens` (migration 17): one row, for a poller whose source authenticates with
 * OAuth 2.0. The tokens are sealed by poller/token-vault.ts before they get here; the rest is
 * what status shows of them: when the access token expires, the renewals of the last 24 h,
 * the last error, and the refresh token the provider refused (its binding's fingerprint), if
 * any. Its renewals go one at a time (`renewing`): it lives as long as the object's store, not
 * a wiring, so a renewal left going by one wiring is waited for by the next (R17).
 */
export class OAuthTokens {
  /** The poller's renewals, one at a time, whichever wiring asks. */
  readonly renewing = new OneAtATime();

  constructor(private readonly host: StoreHost) {}

  row(): OAuthRow | null {
    return (
      this.host.sql
        .exec<OAuthRow & Record<string, SqlStorageValue>>(
          'SELECT sealed, expires_at, issued_at, refresh_for, last_renewal_at, renewals, last_error, last_error_at, refused_for FROM oauth_tokens WHERE id = 1',
        )
        .toArray()[0] ?? null
    );
  }

  /** A renewal's sealed tokens; the failure and the refusal before it are over. */
  saveRenewal(
    tokens: {
      sealed: string;
      expiresAt: number | null;
      issuedAt: number;
      boundTo: string;
    },
    at: number,
  ): void {
    const renewals = JSON.stringify([...this.renewals(at), at]);
    this.host.write(
      `INSERT INTO oauth_tokens (id, sealed, expires_at, issued_at, refresh_for, last_renewal_at, renewals, last_error, last_error_at, refused_for)
       VALUES (1, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)
       ON CONFLICT (id) DO UPDATE SET sealed = excluded.sealed, expires_at = excluded.expires_at,
         issued_at = excluded.issued_at, refresh_for = excluded.refresh_for,
         last_renewal_at = excluded.last_renewal_at, renewals = excluded.renewals,
         last_error = NULL, last_error_at = NULL, refused_for = NULL`,
      tokens.sealed,
      tokens.expiresAt,
      tokens.issuedAt,
      tokens.boundTo,
      at,
      renewals,
    );
  }

  /**
   * Tokens sealed before bindings were, sealed again with the binding they are taken for:
   * only if the row still holds `legacy` (no renewal or other wiring wrote it meanwhile).
   * Whether it was written.
   */
  rebind(legacy: string, sealed: string, boundTo: string): boolean {
    return (
      this.host.write(
        'UPDATE oauth_tokens SET sealed = ?, refresh_for = ? WHERE id = 1 AND sealed = ?',
        sealed,
        boundTo,
        legacy,
      ) > 0
    );
  }

  /**
   * A renewal failed; with `refusedFor`, the provider refused that binding's refresh token for
   * good. Without, a refusal kept from before is over: no renewal is tried for a refused
   * binding, so this one was tried for another (a reconnect, or a config moved elsewhere).
   */
  saveFailure(error: string, at: number, refusedFor: string | null): void {
    this.host.write(
      `INSERT INTO oauth_tokens (id, last_error, last_error_at, refused_for) VALUES (1, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET last_error = excluded.last_error,
         last_error_at = excluded.last_error_at,
         refused_for = excluded.refused_for`,
      error,
      at,
      refusedFor,
    );
  }

  /** The renewals' times within the 24 hours before `now`. */
  renewals(now: number): number[] {
    const row = this.row();
    if (row === null) return [];
    const times: unknown = JSON.parse(row.renewals);
    if (!Array.isArray(times)) return [];
    return times.filter((at): at is number => typeof at === 'number' && at > now - DAY_MS);
  }
}
