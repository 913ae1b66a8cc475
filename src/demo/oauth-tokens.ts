/**
 * The demo OAuth provider's tokens (POST /demo/oauth/token, oauth-routes.ts), kept in the
 * DemoUpstream object's storage: short-lived access tokens and single-use refresh tokens.
 * Each refresh retires the token presented at once and issues a new one (rotation, as the
 * OAuth 2.0 Security BCP asks of public upstreams); a retired one is refused for good. Only
 * SHA-256 digests are stored, never a token.
 */

/** What the refresh_token grant answers (RFC 6749 §5.1 and §5.2). */
export type TokenGrant =
  | {
      ok: true;
      access_token: string;
      token_type: 'Bearer';
      expires_in: number;
      refresh_token: string;
    }
  | { ok: false; error: 'invalid_grant'; error_description: string };

export interface RefreshOptions {
  /**
   * The refresh token the demo poller starts from (DEMO_REFRESH_TOKEN): valid until used once,
   * if the provider has never seen it. A new value is a "reconnect": the user authorized again.
   */
  initial: string | null;
  /** How long a new access token lives, in seconds. */
  accessTtlS: number;
}

/** Retired refresh tokens are remembered this long (the initial one for good). */
const RETIRED_KEPT_MS = 7 * 24 * 60 * 60_000;

export class DemoOAuthTokens {
  constructor(private readonly storage: DurableObjectStorage) {
    storage.sql.exec(`CREATE TABLE IF NOT EXISTS oauth_tokens (
      digest TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      issued_at_ms INTEGER NOT NULL,
      expires_at_ms INTEGER,
      retired_at_ms INTEGER,
      initial INTEGER NOT NULL DEFAULT 0
    )`);
  }

  /**
   * The refresh_token grant: the presented token is retired and a new pair issued, or it is
   * refused (invalid_grant). Everything awaited comes first: the check and the retirement are
   * one synchronous step, so two requests with the same token never both succeed.
   */
  async refresh(presented: string, options: RefreshOptions): Promise<TokenGrant> {
    const access = newToken('demo_at_');
    const refresh = newToken('demo_rt_');
    const [presentedDigest, initialDigest, accessDigest, refreshDigest] = await Promise.all([
      digest(presented),
      options.initial === null ? Promise.resolve(null) : digest(options.initial),
      digest(access),
      digest(refresh),
    ]);
    const sql = this.storage.sql;
    const now = Date.now();
    return this.storage.transactionSync((): TokenGrant => {
      const row = sql
        .exec<{ kind: string; retired_at_ms: number | null }>(
          'SELECT kind, retired_at_ms FROM oauth_tokens WHERE digest = ?',
          presentedDigest,
        )
        .toArray()[0];
      const refused = refusal(row, presentedDigest === initialDigest);
      if (refused !== null)
        return { ok: false, error: 'invalid_grant', error_description: refused };
      sql.exec(
        `INSERT INTO oauth_tokens (digest, kind, issued_at_ms, retired_at_ms, initial)
         VALUES (?1, 'refresh', ?2, ?2, ?3)
         ON CONFLICT (digest) DO UPDATE SET retired_at_ms = ?2`,
        presentedDigest,
        now,
        presentedDigest === initialDigest ? 1 : 0,
      );
      sql.exec(
        "INSERT INTO oauth_tokens (digest, kind, issued_at_ms) VALUES (?, 'refresh', ?)",
        refreshDigest,
        now,
      );
      sql.exec(
        "INSERT INTO oauth_tokens (digest, kind, issued_at_ms, expires_at_ms) VALUES (?, 'access', ?, ?)",
        accessDigest,
        now,
        now + options.accessTtlS * 1000,
      );
      sql.exec(
        `DELETE FROM oauth_tokens WHERE (kind = 'access' AND expires_at_ms < ?1)
           OR (kind = 'refresh' AND initial = 0 AND retired_at_ms < ?2)`,
        now,
        now - RETIRED_KEPT_MS,
      );
      return {
        ok: true,
        access_token: access,
        token_type: 'Bearer',
        expires_in: options.accessTtlS,
        refresh_token: refresh,
      };
    });
  }

  /** Whether `access` is an access token this provider issued that has not expired. */
  async accepts(access: string): Promise<boolean> {
    const found = this.storage.sql
      .exec(
        "SELECT 1 FROM oauth_tokens WHERE digest = ? AND kind = 'access' AND expires_at_ms > ?",
        await digest(access),
        Date.now(),
      )
      .toArray();
    return found.length > 0;
  }
}

/** Why a presented refresh token is refused, or null when it is good for one use. */
function refusal(
  row: { kind: string; retired_at_ms: number | null } | undefined,
  isInitial: boolean,
): string | null {
  if (row === undefined) {
    return isInitial ? null : 'the refresh token was never issued by this provider';
  }
  if (row.kind !== 'refresh') return 'not a refresh token';
  if (row.retired_at_ms !== null) {
    return 'the refresh token was already used: each one is good for one refresh (rotation)';
  }
  return null;
}

/** A random token: a prefix and 32 random bytes, base64url. */
function newToken(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const text = btoa(String.fromCharCode(...bytes));
  return prefix + text.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

async function digest(token: string): Promise<string> {
  const hash = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token));
  return [...new Uint8Array(hash)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
