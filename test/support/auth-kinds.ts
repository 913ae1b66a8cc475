import type { AuthType, StoredTokens, TokenVault } from '../../src/sources/auth/index.ts';
import { OneAtATime } from '../../src/sources/auth/one-at-a-time.ts';
import { rsaKeyPair, verifiedClaims } from './jwt.ts';

/**
 * A fake for each kind of source.auth, for the shared case suite
 * (test/engine/auth-kinds.test.ts): an upstream on api.example.com that answers only a
 * request carrying the kind's credential (a 401 otherwise), and for a kind that renews a
 * token, the provider's token endpoint on login.example.com, strict about what the kind
 * must send it.
 */

/** What one kind's world holds: its hosts, and what the test can do to them. */
export interface AuthWorld {
  fetch: (request: Request) => Promise<Response>;
  /** Whether the upstream takes this request's credential. */
  accepts(request: Request): boolean | Promise<boolean>;
  /** Requests the token endpoint answered with a token. */
  tokens(): number;
  /** Every credential given so far stops working (a revoked token). */
  revoke(): void;
}

/** What the suite needs to run its cases against one kind. */
export interface AuthFake {
  /** `source.auth`, as written in the config. */
  auth: Record<string, unknown>;
  /** The `${NAME}` values it names. */
  env: Record<string, string>;
  /** Values no error, log or status may show. */
  secrets: string[];
  /** A fresh world. */
  world(): Promise<AuthWorld>;
  /** The origin its secrets go to: source.url's, or its token endpoint's (R18). */
  boundTo: string;
  /** What of `source` sets the credential's place too: a config error. */
  clash: { headers?: Record<string, string>; params?: Record<string, string> };
}

export const UPSTREAM = 'https://api.example.com';
export const LOGIN = 'https://login.example.com';

/** An upstream that answers `accepts` requests (the test's pages), a 401 to any other. */
function guardedWorld(
  accepts: (request: Request, revoked: number) => boolean | Promise<boolean>,
  serve: (request: Request) => Promise<Response>,
  token?: (request: Request, revoked: number) => Promise<Response>,
): AuthWorld {
  let revoked = 0;
  let issued = 0;
  const world: AuthWorld = {
    async fetch(request) {
      const url = new URL(request.url);
      if (url.origin === LOGIN && token) {
        const answer = await token(request, revoked);
        if (answer.ok) issued += 1;
        return answer;
      }
      if (url.origin !== UPSTREAM) return new Response('no such host', { status: 502 });
      if (!(await accepts(request, revoked))) {
        return Response.json({ error: 'unauthorized' }, { status: 401 });
      }
      return serve(request);
    },
    accepts: (request) => accepts(request, revoked),
    tokens: () => issued,
    revoke: () => {
      revoked += 1;
    },
  };
  return world;
}

/** A token endpoint's answer: an access token that works until the next `revoke`. */
function tokenIssuer() {
  const live = new Map<string, number>();
  let made = 0;
  return {
    issue(revoked: number): Response {
      made += 1;
      const token = `access-${made}-${crypto.randomUUID().slice(0, 8)}`;
      live.set(token, revoked);
      return Response.json({ access_token: token, token_type: 'Bearer', expires_in: 3600 });
    },
    accepts(request: Request, revoked: number): boolean {
      const token = request.headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
      return live.get(token) === revoked;
    },
  };
}

/** The pages of every world: `n` records, three a page, behind a `cursor`. */
export function pageServer(n: number) {
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const start = Number(url.searchParams.get('cursor') ?? 0);
    const items = Array.from({ length: n }, (_, i) => ({
      id: `r${i + 1}`,
      updated_at: new Date(Date.UTC(2026, 2, 1, 10, 0, i + 1)).toISOString(),
    })).slice(start, start + 3);
    return Response.json({ items, next_cursor: start + 3 < n ? String(start + 3) : null });
  };
}

const RECORDS = 7;

/** The key pair of the jwt_bearer fake, made once. */
const keys = await rsaKeyPair();

const TOKEN = 'ghp_static-token-7Q2';
const PASSWORD = 'pa55:word/2';
/** A key whose URL forms differ from it (percent- and form-encoding). */
const API_KEY = 'sk/live+4f9=Q';
const CLIENT_SECRET = 'client-secret-9e3';

export const authFakes: { [K in AuthType]: AuthFake } = {
  bearer: {
    auth: { type: 'bearer', token: '${UPSTREAM_TOKEN}' },
    env: { UPSTREAM_TOKEN: TOKEN },
    secrets: [TOKEN],
    boundTo: UPSTREAM,
    clash: { headers: { Authorization: 'Bearer x' } },
    world: async () =>
      guardedWorld(
        (request, revoked) =>
          revoked === 0 && request.headers.get('authorization') === `Bearer ${TOKEN}`,
        pageServer(RECORDS),
      ),
  },
  basic: {
    auth: { type: 'basic', username: 'sync@example.com', password: '${UPSTREAM_PASSWORD}' },
    env: { UPSTREAM_PASSWORD: PASSWORD },
    secrets: [PASSWORD, btoa(`sync@example.com:${PASSWORD}`)],
    boundTo: UPSTREAM,
    clash: { headers: { authorization: 'Basic x' } },
    world: async () =>
      guardedWorld(
        (request, revoked) =>
          revoked === 0 &&
          request.headers.get('authorization') === `Basic ${btoa(`sync@example.com:${PASSWORD}`)}`,
        pageServer(RECORDS),
      ),
  },
  api_key: {
    auth: { type: 'api_key', in: 'query', name: 'api_key', key: '${UPSTREAM_KEY}' },
    env: { UPSTREAM_KEY: API_KEY },
    secrets: [API_KEY, encodeURIComponent(API_KEY)],
    boundTo: UPSTREAM,
    clash: { params: { api_key: 'x' } },
    world: async () =>
      guardedWorld(
        (request, revoked) =>
          revoked === 0 && new URL(request.url).searchParams.get('api_key') === API_KEY,
        pageServer(RECORDS),
      ),
  },
  oauth2: {
    auth: {
      type: 'oauth2',
      grant: 'client_credentials',
      token_url: `${LOGIN}/oauth/token`,
      client_id: 'tidemark',
      client_secret: '${CLIENT_SECRET}',
    },
    env: { CLIENT_SECRET },
    secrets: [CLIENT_SECRET],
    boundTo: LOGIN,
    clash: { headers: { Authorization: 'Bearer x' } },
    world: async () => {
      const issuer = tokenIssuer();
      return guardedWorld(issuer.accepts, pageServer(RECORDS), async (request, revoked) => {
        const form = new URLSearchParams(await request.text());
        const basic = `Basic ${btoa(`tidemark:${CLIENT_SECRET}`)}`;
        if (form.get('grant_type') !== 'client_credentials') {
          return Response.json({ error: 'unsupported_grant_type' }, { status: 400 });
        }
        if (request.headers.get('authorization') !== basic) {
          return Response.json({ error: 'invalid_client' }, { status: 401 });
        }
        return issuer.issue(revoked);
      });
    },
  },
  jwt_bearer: {
    auth: {
      type: 'jwt_bearer',
      token_url: `${LOGIN}/token`,
      issuer: 'sync@project.iam.gserviceaccount.com',
      audience: `${LOGIN}/token`,
      scope: 'records.read',
      private_key: '${PRIVATE_KEY}',
    },
    env: { PRIVATE_KEY: keys.pem },
    secrets: [keys.pem],
    boundTo: LOGIN,
    clash: { headers: { Authorization: 'Bearer x' } },
    world: async () => {
      const issuer = tokenIssuer();
      return guardedWorld(issuer.accepts, pageServer(RECORDS), async (request, revoked) => {
        const form = new URLSearchParams(await request.text());
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
          return Response.json({ error: 'unsupported_grant_type' }, { status: 400 });
        }
        const signed = await verifiedClaims(form.get('assertion') ?? '', keys.publicKey);
        const claims = signed?.claims;
        if (
          claims?.iss !== 'sync@project.iam.gserviceaccount.com' ||
          claims.aud !== `${LOGIN}/token` ||
          claims.scope !== 'records.read'
        ) {
          return Response.json({ error: 'invalid_grant' }, { status: 400 });
        }
        return issuer.issue(revoked);
      });
    },
  },
};

/** A vault in memory: what the poller's storage keeps of a renewed token. */
export class MemoryVault implements TokenVault {
  tokens: StoredTokens = { access: null, expiresAt: null, issuedAt: null, refresh: null };
  bound: string | null = null;
  private readonly renewals = new OneAtATime();
  async load(binding: string) {
    return binding === this.bound
      ? { ...this.tokens }
      : { access: null, expiresAt: null, issuedAt: null, refresh: null };
  }
  async save(tokens: StoredTokens, binding: string) {
    this.tokens = { ...tokens };
    this.bound = binding;
  }
  oneAtATime<T>(renewal: () => Promise<T>) {
    return this.renewals.run(renewal);
  }
  failed() {}
  refusedFor() {
    return null;
  }
}
