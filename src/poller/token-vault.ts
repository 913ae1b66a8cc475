import {
  decryptSecret,
  encryptSecret,
  type SealedSecret,
  type SecretKeys,
} from '../secrets/index.ts';
import type { StoredTokens, TokenVault } from '../sources/auth/oauth2.ts';
import type { OAuthTokens } from './store/oauth-tokens.ts';

/** The name the tokens are sealed under (bound into the seal: they cannot pass for a secret). */
const SEALED_AS = 'oauth_tokens';

const NONE: StoredTokens = {
  access: null,
  expiresAt: null,
  issuedAt: null,
  refresh: null,
  refreshFor: null,
};

/**
 * The OAuth 2.0 tokens of a poller, in its object's storage (`oauth_tokens`), sealed under
 * SECRETS_KEY like its own secrets (AES-GCM, a key per poller): a static poller's rotated
 * refresh token lives here too, never in Worker secrets. Opened once per renewal or per
 * instance; a seal that cannot be opened (the key was changed) counts as no token.
 */
export class SqliteTokenVault implements TokenVault {
  private opened: { sealed: string; tokens: StoredTokens } | null = null;

  constructor(
    private readonly table: OAuthTokens,
    private readonly keys: SecretKeys,
    private readonly poller: string,
  ) {}

  async load(): Promise<StoredTokens> {
    const row = this.table.row();
    if (row === null || row.sealed === null) return NONE;
    if (this.opened?.sealed === row.sealed) return this.opened.tokens;
    try {
      const sealed = JSON.parse(row.sealed) as SealedSecret;
      const text = await decryptSecret(this.keys, this.poller, SEALED_AS, sealed);
      const { access, refresh } = JSON.parse(text) as {
        access: string | null;
        refresh: string | null;
      };
      const tokens = {
        access,
        refresh,
        expiresAt: row.expires_at,
        issuedAt: row.issued_at,
        refreshFor: row.refresh_for,
      };
      this.opened = { sealed: row.sealed, tokens };
      return tokens;
    } catch {
      return NONE;
    }
  }

  async save(tokens: StoredTokens, at: number): Promise<void> {
    const value = JSON.stringify({ access: tokens.access, refresh: tokens.refresh });
    const sealed = JSON.stringify(await encryptSecret(this.keys, this.poller, SEALED_AS, value));
    // A synchronous write: durable before anything this object sends next (its output gate).
    this.table.saveRenewal(
      {
        sealed,
        expiresAt: tokens.expiresAt,
        issuedAt: tokens.issuedAt ?? at,
        refreshFor: tokens.refreshFor,
      },
      at,
    );
    this.opened = { sealed, tokens };
  }

  failed(error: string, at: number, reconnectFor: string | null): void {
    this.table.saveFailure(error, at, reconnectFor);
  }

  refusedFor(): string | null {
    return this.table.row()?.refused_for ?? null;
  }
}
