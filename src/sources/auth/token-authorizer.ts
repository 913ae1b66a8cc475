import type { Authorizer, Credential } from './authorizer.ts';

/** What a token endpoint answered (RFC 6749 §5), as the authorizer acts on it. */
export type TokenAnswer =
  | { ok: true; accessToken: string; expiresInMs: number | null; refreshToken: string | null }
  | {
      ok: false;
      /** reconnect: the refresh token is refused for good (invalid_grant); a person must give a new one. */
      kind: 'reconnect' | 'misconfigured' | 'transient' | 'rate_limited';
      error: string;
      retryAfter?: number;
    };

/**
 * POSTs a form to a token endpoint (with `headers`, a client's Basic one say) and classifies
 * its answer (sources/auth/token-endpoint.ts); `secrets`: values to take out of what it shows.
 */
export type TokenEndpoint = (
  tokenUrl: string,
  form: URLSearchParams,
  headers: Record<string, string>,
  secrets: readonly string[],
) => Promise<TokenAnswer>;

/** The tokens a source that renews one keeps between runs (sealed at rest by the vault). */
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
 * Tokens are kept with the binding they were obtained for (see each kind's `bindingOf`), and
 * loaded for one binding only: those of another are no tokens at all (R18).
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

/** How a kind that renews a token gets one: what differs between oauth2 and jwt_bearer. */
export interface TokenGrant {
  /** A fingerprint of what the tokens are obtained for (R18): stored with them, never a secret. */
  binding(): Promise<string>;
  /** The configured refresh token's fingerprint: what tokens sealed before bindings descend from. */
  lineage(): Promise<string | null>;
  /**
   * The refresh token a renewal presents (a rotated one stored, or the configured one), or
   * null when the grant presents none.
   */
  refreshOf(stored: StoredTokens): string | null;
  /** Asks the token endpoint; `secrets`: every value to take out of what it shows. */
  ask(refresh: string | null, secrets: readonly string[]): Promise<TokenAnswer>;
  /** What gives the poller a new refresh token, for "reconnect needed". */
  reconnect: string;
}

/** No token is used this close to its expiry (at most a fifth of its life). */
const EXPIRY_MARGIN_MS = 60_000;

/**
 * A short-lived access token sent as `Authorization: Bearer …`, cached until shortly before it
 * expires and renewed when a request needs it, as its kind's grant says. A refresh token the
 * provider rotates is stored, sealed, before the access token that came with it is used
 * (R17), so no crash leaves the poller with only a retired one. One renewal at a time per
 * object (the vault's lock): a request that needed a token meanwhile takes the one it
 * brought. Tokens are bound to what they were obtained for (R18): a config that changes it
 * starts without them. A provider that refuses the refresh token (invalid_grant) puts the
 * poller in "reconnect needed" until that changes.
 */
export class TokenAuthorizer implements Authorizer {
  private cached: { value: string; usableUntil: number } | null = null;
  private readonly tokens = new Set<string>();
  // Plain fields, not parameter properties: the config schema loads this module, and
  // check-config runs it in Node, which strips types but compiles nothing.
  private readonly grant: TokenGrant;
  private readonly vault: TokenVault;
  private readonly options: { secrets: readonly string[]; now: () => number };

  constructor(
    grant: TokenGrant,
    vault: TokenVault,
    options: { secrets: readonly string[]; now: () => number },
  ) {
    this.grant = grant;
    this.vault = vault;
    this.options = options;
  }

  async credential(): Promise<Credential> {
    const refused = await this.refused();
    if (refused) return refused;
    const now = this.options.now();
    if (this.cached !== null && this.cached.usableUntil > now) {
      return bearerCredential(this.cached.value);
    }
    const stored = await this.vault.load(await this.grant.binding(), await this.grant.lineage());
    if (stored.access !== null && usableUntil(stored) > now) {
      return this.use(stored.access, usableUntil(stored));
    }
    return this.renew(null);
  }

  async renewAfter401(used: string): Promise<Credential | null> {
    // Another request of the run renewed meanwhile: its token is the one to retry with.
    if (this.cached !== null && this.cached.value !== used)
      return bearerCredential(this.cached.value);
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
  private renew(rejected: string | null): Promise<Credential> {
    return this.vault.oneAtATime(async () => {
      const refused = await this.refused();
      if (refused) return refused;
      const binding = await this.grant.binding();
      const stored = await this.vault.load(binding, await this.grant.lineage());
      const until = usableUntil(stored);
      if (stored.access !== null && until > this.options.now()) {
        if (`Bearer ${stored.access}` !== rejected) return this.use(stored.access, until);
      }
      return this.renewNow(binding, stored);
    });
  }

  private async renewNow(binding: string, stored: StoredTokens): Promise<Credential> {
    const { options } = this;
    const refresh = this.grant.refreshOf(stored);
    if (refresh !== null) this.tokens.add(refresh);
    const answer = await this.grant.ask(refresh, [...options.secrets, ...this.tokens]);
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

  private use(access: string, until: number): Credential {
    this.tokens.add(access);
    const value = `Bearer ${access}`;
    this.cached = { value, usableUntil: until };
    return bearerCredential(value);
  }

  /** "Reconnect needed", while the config's binding is the one whose refresh token was refused. */
  private async refused(): Promise<Credential | null> {
    const refusedFor = this.vault.refusedFor();
    if (refusedFor === null || refusedFor !== (await this.grant.binding())) return null;
    return this.reconnectNeeded('the provider refused the refresh token (invalid_grant)');
  }

  private reconnectNeeded(why: string): Credential {
    return {
      ok: false,
      kind: 'misconfigured',
      error: `source.auth: reconnect needed: ${why}; ${this.grant.reconnect}`,
    };
  }
}

/** A credential sent as the Authorization header `value`. */
export function bearerCredential(value: string): Credential {
  return {
    ok: true,
    value,
    authorize: async (request) => {
      request.headers.set('authorization', value);
      return request;
    },
  };
}

/** Until when a stored access token is used: its expiry less a margin (a fifth of its life at most). */
function usableUntil(tokens: StoredTokens): number {
  if (tokens.access === null) return 0;
  if (tokens.expiresAt === null) return Number.POSITIVE_INFINITY; // until a 401 says otherwise
  const life = tokens.issuedAt === null ? EXPIRY_MARGIN_MS * 5 : tokens.expiresAt - tokens.issuedAt;
  return tokens.expiresAt - Math.min(EXPIRY_MARGIN_MS, life / 5);
}

/** A truncated SHA-256 of `text`: tells values apart without holding them. */
export async function fingerprintOf(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest).slice(0, 12)]
    .map((b) => b.toString(16).padStart(2, '0'))
    .join('');
}

/** `compute()`, once: a fingerprint worked out at the first request and kept. */
export function once<T>(compute: () => Promise<T>): () => Promise<T> {
  let kept: Promise<T> | null = null;
  return () => {
    kept ??= compute();
    return kept;
  };
}
