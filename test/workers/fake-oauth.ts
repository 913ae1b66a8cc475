import { vi } from 'vitest';
import { type FakeHost, FakeUpstream, installFakes } from './fakes.ts';

/**
 * An OAuth 2.0 provider on `login.test` (POST /token) whose access tokens live `accessMs`
 * and whose refresh tokens are single-use: each use retires the one presented and issues a
 * new one (rotation, the OAuth 2.0 Security BCP). It records every token presented, so a
 * test can see that no retired one ever was, and how many renewals it served.
 */
export class FakeOAuthProvider implements FakeHost {
  accessMs = 3_000;
  clientId = 'crm-client';
  readonly clientSecret = 'crm-client-secret-4e1f';
  /** The refresh tokens that work now (one, unless the test adds more). */
  readonly valid = new Set<string>();
  readonly retired = new Set<string>();
  private readonly access = new Map<string, number>();
  /** Refresh tokens presented that had been retired (must stay empty). */
  readonly retiredPresented: string[] = [];
  /** Every refresh token presented, in order. */
  readonly presented: string[] = [];
  renewals = 0;
  private issued = 0;
  private readonly scripted: (() => Response)[] = [];
  /** Called after a renewal is answered with the new tokens (a crash can be arranged here). */
  onIssued?: (tokens: { access: string; refresh: string }) => void;

  constructor(readonly firstRefreshToken = 'refresh-0-initial') {
    this.valid.add(firstRefreshToken);
  }

  private readonly holds: { at: number; hold: { arrived: boolean; released: boolean } }[] = [];
  private received = 0;

  /**
   * Holds the n-th token request from now open, before it is read, until `release()` (flags
   * only: a promise settled by the Durable Object would resume the test inside its I/O context).
   */
  holdNth(n: number) {
    const hold = { arrived: false, released: false };
    this.holds.push({ at: this.received + n, hold });
    return {
      arrived: () => vi.waitUntil(() => hold.arrived, { timeout: 2_000, interval: 1 }),
      release: () => {
        hold.released = true;
      },
    };
  }

  /** The next token request gets this answer. */
  respondOnce(answer: () => Response): void {
    this.scripted.push(answer);
  }

  /** Whether `header` carries an access token that is live now. */
  accepts(header: string | null): boolean {
    const token = header?.replace(/^Bearer /, '') ?? '';
    const expires = this.access.get(token);
    return expires !== undefined && expires > Date.now();
  }

  /** Every access token issued so far stops working (a password change, say). */
  expireAll(): void {
    this.access.clear();
  }

  /** Retires every refresh token (the user revoked the app, say). */
  revokeAll(): void {
    for (const token of this.valid) this.retired.add(token);
    this.valid.clear();
  }

  async handle(request: Request): Promise<Response> {
    this.received += 1;
    const held = this.holds.find((entry) => entry.at === this.received)?.hold;
    if (held) {
      held.arrived = true;
      while (!held.released) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const scripted = this.scripted.shift();
    if (scripted) return scripted();
    const form = new URLSearchParams(await request.text());
    const basic = request.headers.get('authorization');
    const [id, secret] = basic?.startsWith('Basic ')
      ? atob(basic.slice(6)).split(':').map(decodeURIComponent)
      : [form.get('client_id'), form.get('client_secret')];
    if (id !== this.clientId || secret !== this.clientSecret) {
      return Response.json({ error: 'invalid_client' }, { status: 401 });
    }
    let refresh: string | undefined;
    if (form.get('grant_type') === 'refresh_token') {
      const presented = form.get('refresh_token') ?? '';
      this.presented.push(presented);
      if (this.retired.has(presented)) this.retiredPresented.push(presented);
      if (!this.valid.has(presented)) {
        return Response.json(
          { error: 'invalid_grant', error_description: `refresh token ${presented} is not valid` },
          { status: 400 },
        );
      }
      this.valid.delete(presented);
      this.retired.add(presented);
      this.issued += 1;
      refresh = `refresh-${this.issued}-${crypto.randomUUID().slice(0, 8)}`;
      this.valid.add(refresh);
    } else if (form.get('grant_type') !== 'client_credentials') {
      return Response.json({ error: 'unsupported_grant_type' }, { status: 400 });
    }
    this.renewals += 1;
    const access = `access-${this.renewals}-${crypto.randomUUID().slice(0, 8)}`;
    this.access.set(access, Date.now() + this.accessMs);
    if (refresh !== undefined) this.onIssued?.({ access, refresh });
    return Response.json({
      access_token: access,
      token_type: 'Bearer',
      expires_in: this.accessMs / 1000,
      ...(refresh === undefined ? {} : { refresh_token: refresh }),
    });
  }
}

/** An upstream that answers only requests with a live access token of `provider` (401 otherwise). */
export function guarded(provider: FakeOAuthProvider, upstream: FakeHost) {
  const state = { unauthorized: 0 };
  const host: FakeHost = {
    async handle(request) {
      if (!provider.accepts(request.headers.get('authorization'))) {
        state.unauthorized += 1;
        return Response.json({ error: 'invalid_token' }, { status: 401 });
      }
      return upstream.handle(request);
    },
  };
  return { host, state };
}

/** The oauth2 source.auth of the CRM test pollers: the provider above, secrets named as a user would. */
export const CRM_OAUTH = {
  type: 'oauth2',
  token_url: 'https://login.test/token',
  client_id: 'crm-client',
  client_secret: '${CRM_CLIENT_SECRET}',
  refresh_token: '${CRM_REFRESH_TOKEN}',
};

/**
 * A provider on `login.test` and an upstream on `upstream.test` that wants its live access
 * tokens (`gate` counts the 401s), installed as the test's fakes with a receiver.
 */
export function installGuardedUpstream() {
  const provider = new FakeOAuthProvider();
  const upstream = new FakeUpstream();
  const guard = guarded(provider, upstream);
  const { receiver } = installFakes({ 'upstream.test': guard.host, 'login.test': provider });
  return { provider, upstream, receiver, gate: guard.state };
}
