import type { AuthConfig } from '../../config/schema.ts';
import type { HttpFetch } from '../http-source.ts';
import type { AuthHeader, Authorizer } from './authorizer.ts';
import { requestToken } from './token-endpoint.ts';

type OAuth2Config = Extract<AuthConfig, { type: 'oauth2' }>;

/** The tokens an OAuth 2.0 source keeps between runs (sealed at rest by the vault). */
export interface StoredTokens {
  access: string | null;
  /** When the access token expires (our clock); null: the provider did not say. */
  expiresAt: number | null;
  issuedAt: number | null;
  /** The refresh token the provider rotated to, if it did. */
  refresh: string | null;
  /** The fingerprint of the configured refresh token `refresh` descends from. */
  refreshFor: string | null;
}

/** Where the tokens live: the poller's storage, sealed under SECRETS_KEY (poller/token-vault.ts). */
export interface TokenVault {
  load(): Promise<StoredTokens>;
  /** Keeps a renewal's tokens; resolves only once they are durable (R17). */
  save(tokens: StoredTokens, at: number): Promise<void>;
  /** Keeps a renewal's failure; `reconnectFor`: the provider refused this refresh token for good. */
  failed(error: string, at: number, reconnectFor: string | null): void;
  /** The fingerprint of the configured refresh token the provider refused, if it did. */
  refusedFor(): string | null;
}

/** No token is used this close to its expiry (at most a fifth of its life). */
const EXPIRY_MARGIN_MS = 60_000;

/**
 * `type = "oauth2"`: a short-lived access token, cached until shortly before it expires and
 * renewed when a request needs it, from the refresh token (grant = "refresh_token") or as the
 * client (grant = "client_credentials"). A refresh token the provider rotates is stored,
 * sealed, before the access token that came with it is used (R17), so no crash leaves the
 * poller with only a retired one. One renewal at a time per object (requests of a run share
 * it); runs themselves never overlap (the lease). A provider that refuses the refresh token
 * (invalid_grant) puts the poller in "reconnect needed" until its refresh token changes.
 */
export class OAuth2Authorizer implements Authorizer {
  private cached: { value: string; usableUntil: number } | null = null;
  private renewing: Promise<AuthHeader> | null = null;
  private readonly tokens = new Set<string>();
  private configured: Promise<string | null> | null = null;

  constructor(
    private readonly config: OAuth2Config,
    private readonly vault: TokenVault,
    private readonly fetcher: HttpFetch,
    private readonly options: {
      timeout: number;
      secrets: readonly string[];
      now: () => number;
      maxWait: number;
      poller: string;
      /** The `${NAME}` the refresh token comes from, for the reconnect hint. */
      refreshSecret: string | null;
    },
  ) {}

  async header(): Promise<AuthHeader> {
    const refused = await this.refused();
    if (refused) return refused;
    const now = this.options.now();
    if (this.cached !== null && this.cached.usableUntil > now) {
      return { ok: true, value: this.cached.value };
    }
    const stored = await this.vault.load();
    if (stored.access !== null && usableUntil(stored) > now) {
      return this.use(stored.access, usableUntil(stored));
    }
    return this.renew();
  }

  async renewAfter401(used: string): Promise<AuthHeader | null> {
    // Another request of the run renewed meanwhile: its token is the one to retry with.
    if (this.cached !== null && this.cached.value !== used)
      return { ok: true, value: this.cached.value };
    this.cached = null;
    return this.renew();
  }

  learned(): readonly string[] {
    return [...this.tokens];
  }

  /** One renewal at a time: requests that need a token meanwhile wait for it. */
  private renew(): Promise<AuthHeader> {
    this.renewing ??= this.renewNow().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  private async renewNow(): Promise<AuthHeader> {
    const { config, options } = this;
    const fingerprint = await this.fingerprint();
    const stored = await this.vault.load();
    // The provider's rotated token, unless an operator gave a new one since (a reconnect).
    const refresh =
      config.grant === 'client_credentials'
        ? null
        : stored.refresh !== null && stored.refreshFor === fingerprint
          ? stored.refresh
          : (config.refresh_token ?? null);
    if (refresh !== null) this.tokens.add(refresh);
    const answer = await requestToken(config, refresh, this.fetcher, {
      timeout: options.timeout,
      secrets: [...options.secrets, ...this.tokens],
      now: options.now,
      maxWait: options.maxWait,
    });
    const now = options.now();
    if (!answer.ok) {
      const { kind } = answer;
      this.vault.failed(answer.error, now, kind === 'reconnect' ? fingerprint : null);
      if (kind === 'reconnect') return this.reconnectNeeded(answer.error);
      return {
        ok: false,
        kind,
        error: `source.auth: ${answer.error}`,
        ...(answer.retryAfter === undefined ? {} : { retryAfter: answer.retryAfter }),
      };
    }
    this.tokens.add(answer.accessToken);
    if (answer.refreshToken !== null) this.tokens.add(answer.refreshToken);
    const tokens: StoredTokens = {
      access: answer.accessToken,
      expiresAt: answer.expiresInMs === null ? null : now + answer.expiresInMs,
      issuedAt: now,
      refresh: answer.refreshToken ?? refresh,
      refreshFor: fingerprint,
    };
    // Durable before the access token is used: a provider that rotated the refresh token has
    // retired the one we sent (R17).
    await this.vault.save(tokens, now);
    return this.use(answer.accessToken, usableUntil(tokens));
  }

  private use(access: string, until: number): AuthHeader {
    this.tokens.add(access);
    const value = `Bearer ${access}`;
    this.cached = { value, usableUntil: until };
    return { ok: true, value };
  }

  /** "Reconnect needed", while the configured refresh token is the one the provider refused. */
  private async refused(): Promise<AuthHeader | null> {
    const refusedFor = this.vault.refusedFor();
    if (refusedFor === null || refusedFor !== (await this.fingerprint())) return null;
    return this.reconnectNeeded('the provider refused the refresh token (invalid_grant)');
  }

  private reconnectNeeded(why: string): AuthHeader {
    const { poller, refreshSecret } = this.options;
    const secret = refreshSecret ?? '<NAME>';
    return {
      ok: false,
      kind: 'misconfigured',
      error: `source.auth: reconnect needed: ${why}; give poller "${poller}" a new refresh token (PUT /pollers/${poller}/secrets/${secret}, or the Worker secret ${secret} for a static poller)`,
    };
  }

  /** A fingerprint of the configured refresh token (never the token): which one is in use. */
  private fingerprint(): Promise<string | null> {
    this.configured ??= fingerprintOf(this.config.refresh_token ?? null);
    return this.configured;
  }
}

/** Until when a stored access token is used: its expiry less a margin (a fifth of its life at most). */
function usableUntil(tokens: StoredTokens): number {
  if (tokens.access === null) return 0;
  if (tokens.expiresAt === null) return Number.POSITIVE_INFINITY; // until a 401 says otherwise
  const life = tokens.issuedAt === null ? EXPIRY_MARGIN_MS * 5 : tokens.expiresAt - tokens.issuedAt;
  return tokens.expiresAt - Math.min(EXPIRY_MARGIN_MS, life / 5);
}

async function fingerprintOf(token: string | null): Promise<string | null> {
  if (token === null) return null;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token));
  return [...new Uint8Array(digest).slice(0, 12)]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
}
