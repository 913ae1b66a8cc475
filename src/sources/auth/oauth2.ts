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
}

/**
 * Where the tokens live: the poller's storage, sealed under SECRETS_KEY (poller/token-vault.ts).
 * Tokens are kept with the binding they were obtained for (see `bindingOf`), and loaded for
 * one binding only: those of another are no tokens at all (R18).
 */
export interface TokenVault {
  /**
   * The tokens obtained for `binding`; none when the stored ones were obtained for another.
   * Tokens sealed before bindings were (no binding of their own) are taken for `binding` only
   * when they descend from the configured refresh token whose fingerprint is `lineage`.
   */
  load(binding: string, lineage: string | null): Promise<StoredTokens>;
  /** Keeps a renewal's tokens, obtained for `binding`; resolves only once they are durable (R17). */
  save(tokens: StoredTokens, binding: string, at: number): Promise<void>;
  /** Keeps a renewal's failure; `reconnectFor`: the binding whose refresh token the provider refused for good. */
  failed(error: string, at: number, reconnectFor: string | null): void;
  /** The binding whose refresh token the provider refused, if it did. */
  refusedFor(): string | null;
  /**
   * Runs a renewal once every other renewal of the poller has settled: one lock per poller
   * object, not per wiring, so a renewal still going when the wiring is built again (a
   * look-ahead page of an ended run, a changed secret) never overlaps the next one (R17).
   */
  oneAtATime<T>(renewal: () => Promise<T>): Promise<T>;
}

/** No token is used this close to its expiry (at most a fifth of its life). */
const EXPIRY_MARGIN_MS = 60_000;

/**
 * `type = "oauth2"`: a short-lived access token, cached until shortly before it expires and
 * renewed when a request needs it, from the refresh token (grant = "refresh_token") or as the
 * client (grant = "client_credentials"). A refresh token the provider rotates is stored,
 * sealed, before the access token that came with it is used (R17), so no crash leaves the
 * poller with only a retired one. One renewal at a time per object (the vault's lock): a
 * request that needed a token meanwhile takes the one it brought. Tokens are bound to the
 * token endpoint, source origin, client id and configured refresh token they were obtained
 * for (R18): a config that changes any of them starts without them. A provider that refuses
 * the refresh token (invalid_grant) puts the poller in "reconnect needed" until that changes.
 */
export class OAuth2Authorizer implements Authorizer {
  private cached: { value: string; usableUntil: number } | null = null;
  private readonly tokens = new Set<string>();
  private bound: Promise<string> | null = null;
  private descends: Promise<string | null> | null = null;

  constructor(
    private readonly config: OAuth2Config,
    private readonly vault: TokenVault,
    private readonly fetcher: HttpFetch,
    private readonly options: {
      timeout: number;
      secrets: readonly string[];
      now: () => number;
      maxWait: number;
      /** source.url's origin: where the access token goes, so what it is bound to. */
      origin: string;
      /** What gives the poller a new refresh token, for "reconnect needed". */
      reconnect: string;
    },
  ) {}

  async header(): Promise<AuthHeader> {
    const refused = await this.refused();
    if (refused) return refused;
    const now = this.options.now();
    if (this.cached !== null && this.cached.usableUntil > now) {
      return { ok: true, value: this.cached.value };
    }
    const stored = await this.vault.load(await this.binding(), await this.lineage());
    if (stored.access !== null && usableUntil(stored) > now) {
      return this.use(stored.access, usableUntil(stored));
    }
    return this.renew(null);
  }

  async renewAfter401(used: string): Promise<AuthHeader | null> {
    // Another request of the run renewed meanwhile: its token is the one to retry with.
    if (this.cached !== null && this.cached.value !== used)
      return { ok: true, value: this.cached.value };
    this.cached = null;
    return this.renew(used);
  }

  learned(): readonly string[] {
    return [...this.tokens];
  }

  /**
   * One renewal at a time per object: a request that needed a token while another renewal
   * went on takes the token that renewal brought, unless it is the one the upstream
   * `rejected` (401), and renews only if there is none.
   */
  private renew(rejected: string | null): Promise<AuthHeader> {
    return this.vault.oneAtATime(async () => {
      const refused = await this.refused();
      if (refused) return refused;
      const binding = await this.binding();
      const stored = await this.vault.load(binding, await this.lineage());
      const until = usableUntil(stored);
      if (stored.access !== null && until > this.options.now()) {
        if (`Bearer ${stored.access}` !== rejected) return this.use(stored.access, until);
      }
      return this.renewNow(binding, stored);
    });
  }

  private async renewNow(binding: string, stored: StoredTokens): Promise<AuthHeader> {
    const { config, options } = this;
    // The provider's rotated token: the stored tokens descend from the configured one (their
    // binding has its fingerprint), so a new configured token (a reconnect) starts anew.
    const refresh =
      config.grant === 'client_credentials'
        ? null
        : (stored.refresh ?? config.refresh_token ?? null);
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
      this.vault.failed(answer.error, now, kind === 'reconnect' ? binding : null);
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
    };
    // Durable before the access token is used: a provider that rotated the refresh token has
    // retired the one we sent (R17).
    await this.vault.save(tokens, binding, now);
    return this.use(answer.accessToken, usableUntil(tokens));
  }

  private use(access: string, until: number): AuthHeader {
    this.tokens.add(access);
    const value = `Bearer ${access}`;
    this.cached = { value, usableUntil: until };
    return { ok: true, value };
  }

  /** "Reconnect needed", while the config's binding is the one whose refresh token was refused. */
  private async refused(): Promise<AuthHeader | null> {
    const refusedFor = this.vault.refusedFor();
    if (refusedFor === null || refusedFor !== (await this.binding())) return null;
    return this.reconnectNeeded('the provider refused the refresh token (invalid_grant)');
  }

  private reconnectNeeded(why: string): AuthHeader {
    return {
      ok: false,
      kind: 'misconfigured',
      error: `source.auth: reconnect needed: ${why}; ${this.options.reconnect}`,
    };
  }

  private binding(): Promise<string> {
    this.bound ??= bindingOf(this.config, this.options.origin);
    return this.bound;
  }

  /** The configured refresh token's fingerprint: what tokens sealed before bindings descend from. */
  private lineage(): Promise<string | null> {
    const token = this.config.refresh_token;
    this.descends ??= token === undefined ? Promise.resolve(null) : fingerprintOf(token);
    return this.descends;
  }
}

/**
 * A fingerprint of what tokens are obtained for: the token endpoint, the origin the access
 * token goes to, the client, and the configured refresh token (its own fingerprint: never
 * the token). Stored with the tokens, never a secret.
 */
export async function bindingOf(config: OAuth2Config, origin: string): Promise<string> {
  const token = config.refresh_token;
  const refresh = token === undefined ? null : await fingerprintOf(token);
  return fingerprintOf(JSON.stringify([config.token_url, origin, config.client_id, refresh]));
}

/** Until when a stored access token is used: its expiry less a margin (a fifth of its life at most). */
function usableUntil(tokens: StoredTokens): number {
  if (tokens.access === null) return 0;
  if (tokens.expiresAt === null) return Number.POSITIVE_INFINITY; // until a 401 says otherwise
  const life = tokens.issuedAt === null ? EXPIRY_MARGIN_MS * 5 : tokens.expiresAt - tokens.issuedAt;
  return tokens.expiresAt - Math.min(EXPIRY_MARGIN_MS, life / 5);
}

/** A truncated SHA-256 of `text`: tells values apart without holding them. */
async function fingerprintOf(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest).slice(0, 12)]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
}
