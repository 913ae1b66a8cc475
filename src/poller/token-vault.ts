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

const NONE: StoredTokens = { access: null, expiresAt: null, issuedAt: null, refresh: null };

/** What is sealed: the tokens and the binding they were obtained for (R18). */
interface Sealed {
  access: string | null;
  refresh: string | null;
  bound?: string;
}

/**
 * The OAuth 2.0 tokens of a poller, in its object's storage (`oauth_tokens`), sealed under
 * SECRETS_KEY like its own secrets (AES-GCM, a key per poller): a static poller's rotated
 * refresh token lives here too, never in Worker secrets. The binding the tokens were obtained
 * for is sealed with them, so no plain column can lend them to another config; tokens sealed
 * for another binding count as none, as does a seal that cannot be opened (the key was
 * changed). Tokens sealed before bindings were are taken once, for the config being wired,
 * when they descend from its configured refresh token (their row's `refresh_for` was that
 * token's fingerprint then), and sealed with its binding at once: a provider that rotates refresh tokens has retired the configured
 * one, so dropping them would force a reconnect on every such poller at the upgrade. Opened
 * once per renewal or per instance.
 */
export class SqliteTokenVault implements TokenVault {
  private opened: { sealed: string; tokens: StoredTokens; bound: string | null } | null = null;

  constructor(
    private readonly table: OAuthTokens,
    private readonly keys: SecretKeys,
    private readonly poller: string,
  ) {}

  async load(binding: string, lineage: string | null): Promise<StoredTokens> {
    const row = this.table.row();
    if (row === null || row.sealed === null) return NONE;
    if (this.opened?.sealed !== row.sealed) {
      try {
        const sealed = JSON.parse(row.sealed) as SealedSecret;
        const text = await decryptSecret(this.keys, this.poller, SEALED_AS, sealed);
        const { access, refresh, bound } = JSON.parse(text) as Sealed;
        const tokens = { access, refresh, expiresAt: row.expires_at, issuedAt: row.issued_at };
        if (bound === undefined && lineage !== null && row.refresh_for === lineage) {
          // Taken once: sealed at once with the binding they are taken for, so no config
          // wired later (a replace that moves source.url) takes them too (R18).
          const resealed = await this.seal({ access, refresh, bound: binding });
          if (!this.table.rebind(row.sealed, resealed, binding)) {
            // Another wiring took them meanwhile (or this life ended): as the row says now.
            const now = this.table.row();
            return now?.sealed === row.sealed ? NONE : this.load(binding, lineage);
          }
          this.opened = { sealed: resealed, tokens, bound: binding };
        } else this.opened = { sealed: row.sealed, tokens, bound: bound ?? null };
      } catch {
        return NONE;
      }
    }
    return this.opened.bound === binding ? this.opened.tokens : NONE;
  }

  /** The tokens and their binding, sealed under SECRETS_KEY (as JSON text). */
  private async seal(value: Sealed): Promise<string> {
    return JSON.stringify(
      await encryptSecret(this.keys, this.poller, SEALED_AS, JSON.stringify(value)),
    );
  }

  async save(tokens: StoredTokens, binding: string, at: number): Promise<void> {
    const sealed = await this.seal({
      access: tokens.access,
      refresh: tokens.refresh,
      bound: binding,
    });
    // A synchronous write: durable before anything this object sends next (its output gate).
    this.table.saveRenewal(
      {
        sealed,
        expiresAt: tokens.expiresAt,
        issuedAt: tokens.issuedAt ?? at,
        boundTo: binding,
      },
      at,
    );
    this.opened = { sealed, tokens, bound: binding };
  }

  failed(error: string, at: number, reconnectFor: string | null): void {
    this.table.saveFailure(error, at, reconnectFor);
  }

  refusedFor(): string | null {
    return this.table.row()?.refused_for ?? null;
  }

  oneAtATime<T>(renewal: () => Promise<T>): Promise<T> {
    return this.table.renewing.run(renewal);
  }
}
