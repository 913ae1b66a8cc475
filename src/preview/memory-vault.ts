import type { StoredTokens, TokenVault } from '../sources/auth/index.ts';

const NONE: StoredTokens = { access: null, expiresAt: null, issuedAt: null, refresh: null };

/**
 * The token storage of a preview of an unsaved config: memory, for the one request that
 * asks for it, then dropped. Only a client_credentials token lands here: a refresh_token
 * grant is refused before any request (a provider that rotates refresh tokens would retire
 * the configured one, and this vault would lose the new one: R17).
 */
export class MemoryVault implements TokenVault {
  private tokens: { tokens: StoredTokens; binding: string } | null = null;
  private refused: string | null = null;
  private renewing: Promise<unknown> = Promise.resolve();

  async load(binding: string): Promise<StoredTokens> {
    return this.tokens?.binding === binding ? this.tokens.tokens : NONE;
  }

  async save(tokens: StoredTokens, binding: string): Promise<void> {
    this.tokens = { tokens, binding };
  }

  failed(_error: string, _at: number, reconnectFor: string | null): void {
    this.refused = reconnectFor;
  }

  refusedFor(): string | null {
    return this.refused;
  }

  oneAtATime<T>(renewal: () => Promise<T>): Promise<T> {
    const next = this.renewing.then(renewal, renewal);
    this.renewing = next.catch(() => undefined);
    return next;
  }
}
