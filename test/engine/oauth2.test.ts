import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { AuthConfig } from '../../src/config/schema.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { DeliveryItem, RunContext } from '../../src/engine/ports.ts';
import {
  OAuth2Authorizer,
  type StoredTokens,
  type TokenVault,
} from '../../src/sources/auth/oauth2.ts';
import { OneAtATime } from '../../src/sources/auth/one-at-a-time.ts';
import { tokenEndpointOf } from '../../src/sources/auth/token-endpoint.ts';
import { HttpSource } from '../../src/sources/http-source.ts';

const HOUR = 3_600_000;
const MINUTE = 60_000;
const START = Date.parse('2026-11-01T00:00:00Z');

/** A vault in memory: what the poller's storage keeps, with how many saves. */
class MemoryVault implements TokenVault {
  tokens: StoredTokens = { access: null, expiresAt: null, issuedAt: null, refresh: null };
  bound: string | null = null;
  refused: string | null = null;
  saves = 0;
  private readonly renewals = new OneAtATime();
  async load(binding: string) {
    return binding === this.bound
      ? { ...this.tokens }
      : { access: null, expiresAt: null, issuedAt: null, refresh: null };
  }
  async save(tokens: StoredTokens, binding: string) {
    this.tokens = { ...tokens };
    this.bound = binding;
    this.saves += 1;
  }
  oneAtATime<T>(renewal: () => Promise<T>) {
    return this.renewals.run(renewal);
  }
  failed(_error: string, _at: number, reconnectFor: string | null) {
    if (reconnectFor !== null) this.refused = reconnectFor;
  }
  refusedFor() {
    return this.refused;
  }
}

/** A provider and an upstream on a virtual clock: tokens live an hour, refresh tokens are single-use. */
function world() {
  const clock = { now: START };
  const valid = new Set(['refresh-0']);
  const retiredPresented: string[] = [];
  const access = new Map<string, number>();
  const records: { id: string; at: number }[] = [];
  let renewals = 0;
  let pending: (() => void)[] = [];
  let onHeld: (() => void) | null = null;
  const fetcher = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.host === 'login.test') {
      // The answer waits for the test to let it through (so requests can overlap).
      if (hold.on) {
        await new Promise<void>((resolve) => {
          pending.push(resolve);
          onHeld?.();
        });
      }
      const fault = faults.next?.();
      if (fault) return fault;
      const form = new URLSearchParams(await request.text());
      const presented = form.get('refresh_token') ?? '';
      if (!valid.has(presented)) {
        retiredPresented.push(presented);
        return Response.json({ error: 'invalid_grant' }, { status: 400 });
      }
      valid.delete(presented);
      renewals += 1;
      const refresh = `refresh-${renewals}`;
      valid.add(refresh);
      const token = `access-${renewals}`;
      access.set(token, clock.now + HOUR);
      return Response.json({ access_token: token, expires_in: 3600, refresh_token: refresh });
    }
    const bearer = request.headers.get('authorization')?.replace('Bearer ', '') ?? '';
    if ((access.get(bearer) ?? 0) <= clock.now) return new Response('expired', { status: 401 });
    const from = Date.parse(url.searchParams.get('since') ?? '');
    const items = records
      .filter((r) => r.at >= from)
      .map((r) => ({ id: r.id, updated_at: new Date(r.at).toISOString() }));
    return Response.json(items);
  };
  const hold = { on: false };
  /** Answers the token endpoint gives instead of a token, by the test's choice. */
  const faults: { next?: () => Response | null } = {};
  /** Resolves once a request to the token endpoint is held. */
  const held = () =>
    new Promise<void>((resolve) => {
      if (pending.length > 0) resolve();
      else onHeld = resolve;
    });
  /** Lets every held request through, and those that come later. */
  const release = () => {
    hold.on = false;
    const waiting = pending;
    pending = [];
    for (const resolve of waiting) resolve();
  };
  return {
    clock,
    fetcher,
    records,
    retiredPresented,
    hold,
    held,
    release,
    faults,
    access,
    renewals: () => renewals,
  };
}

const OAUTH: AuthConfig = {
  type: 'oauth2',
  grant: 'refresh_token',
  token_url: 'https://login.test/token',
  client_id: 'crm',
  client_secret: 'secret',
  refresh_token: 'refresh-0',
  client_auth: 'basic',
};

/** A poller of the world's upstream, every minute, delivering to a set of ids. */
function crmPoller(w: ReturnType<typeof world>, vault: TokenVault) {
  const entry = loadPoller(
    'crm',
    {
      every: '1m',
      start_from: new Date(START).toISOString(),
      source: { url: 'https://api.test/changes', from_param: 'since', auth: OAUTH },
      deliver: { type: 'webhook', url: 'https://receiver.test/', secret: 'a-secret-for-tests' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  const delivered = new Set<string>();
  const store = new MemoryStore();
  const auth = authorizer(w, vault);
  const ctx: RunContext = {
    poller: 'crm',
    config: entry.config,
    store,
    source: new HttpSource(entry.config.source, w.fetcher, [], () => w.clock.now, { auth }),
    deliverer: {
      async deliver(items: DeliveryItem[]) {
        for (const item of items) delivered.add(item.update.id);
        return { kind: 'delivered' };
      },
    },
    now: () => w.clock.now,
    random: () => 0.5,
  };
  return { engine: new PollerEngine(ctx, { set: async () => {} }), delivered, store };
}

function authorizer(w: ReturnType<typeof world>, vault: TokenVault) {
  const now = () => w.clock.now;
  return new OAuth2Authorizer(OAUTH as Extract<AuthConfig, { type: 'oauth2' }>, vault, {
    tokenEndpoint: tokenEndpointOf(w.fetcher, { timeout: 10_000, secrets: [], now, maxWait: HOUR }),
    secrets: [],
    now,
    origin: 'https://api.test',
    reconnect: 'give poller "crm" a new refresh token',
  });
}

describe('an OAuth 2.0 source over hours of simulated time', () => {
  it('loses nothing while its token endpoint fails and rate-limits, and never presents a retired refresh token', async () => {
    const w = world();
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    // 20% of token requests fail: 503s, 429s with a Retry-After, broken connections.
    w.faults.next = () => {
      const roll = random();
      if (roll < 0.08) return new Response('down', { status: 503 });
      if (roll < 0.16) {
        return Response.json(
          { error: 'rate_limited' },
          { status: 429, headers: { 'retry-after': '300' } },
        );
      }
      if (roll < 0.2) throw new TypeError('Network connection lost');
      return null;
    };
    const { engine, delivered, store } = crmPoller(w, new MemoryVault());
    let made = 0;
    for (let minute = 0; minute < 8 * 60; minute += 1) {
      w.records.push({ id: `r${made}`, at: w.clock.now });
      made += 1;
      // Tokens live 10 minutes here: many renewals, each one a chance to fail.
      for (const [token, expires] of w.access)
        w.access.set(token, Math.min(expires, w.clock.now + 10 * MINUTE));
      await engine.trigger('cron');
      await engine.onAlarm();
      w.clock.now += MINUTE;
    }
    w.faults.next = () => null;
    for (let minute = 0; minute < 30; minute += 1) {
      await engine.trigger('cron');
      await engine.onAlarm();
      w.clock.now += MINUTE;
    }

    expect(delivered.size).toBe(made);
    expect(w.retiredPresented).toEqual([]);
    expect(store.read().failures).toBe(0);
    expect(store.runs.some((run) => run.error?.includes('HTTP 429'))).toBe(true);
    expect(store.runs.some((run) => run.error?.includes('HTTP 503'))).toBe(true);
  });

  it('polls for six hours of one-minute ticks with hour-long tokens and rotating refresh tokens, without a human', async () => {
    const w = world();
    const vault = new MemoryVault();
    const { engine, delivered } = crmPoller(w, vault);
    for (let tick = 0; tick < 6 * 60; tick += 1) {
      w.records.push({ id: `r${tick}`, at: w.clock.now });
      const reply = await engine.runNow();
      expect(reply).toMatchObject({ outcome: 'ran', run: { outcome: 'success' } });
      w.clock.now += MINUTE;
    }

    expect(delivered.size).toBe(6 * 60);
    expect(w.retiredPresented).toEqual([]);
    // A renewal a little before each hour is up: 6 or 7, never one per tick.
    expect(w.renewals()).toBeGreaterThanOrEqual(6);
    expect(w.renewals()).toBeLessThanOrEqual(8);
    expect(vault.saves).toBe(w.renewals());
  });

  it('renews once for requests that need a token at the same time', async () => {
    const w = world();
    const auth = authorizer(w, new MemoryVault());
    w.hold.on = true;
    const both = Promise.all([
      auth.credential(),
      auth.credential(),
      auth.renewAfter401('Bearer none'),
    ]);
    // The first renewal is held at the token endpoint; a second one, if any, would be sent
    // while it is (the callers are all waiting by the next macrotask), and pass once released.
    await w.held();
    await new Promise((resolve) => setTimeout(resolve, 0));
    w.release();
    const headers = await both;

    expect(w.renewals()).toBe(1);
    expect(headers.map((h) => (h?.ok ? h.value : String(h)))).toEqual([
      'Bearer access-1',
      'Bearer access-1',
      'Bearer access-1',
    ]);
  });

  it('keeps the rotated refresh token durable before the access token is used', async () => {
    const w = world();
    const order: string[] = [];
    const vault = new MemoryVault();
    const save = vault.save.bind(vault);
    vault.save = async (tokens, binding) => {
      order.push(`saved ${tokens.refresh}`);
      await save(tokens, binding);
    };
    const auth = authorizer(w, vault);
    const header = await auth.credential();
    order.push(`used ${header.ok ? header.value : ''}`);

    expect(order).toEqual(['saved refresh-1', 'used Bearer access-1']);
    // A new instance (after a crash) starts from what was saved, not the retired token.
    const again = authorizer(w, vault);
    w.clock.now += 2 * HOUR;
    expect(await again.credential()).toMatchObject({ ok: true, value: 'Bearer access-2' });
    expect(w.retiredPresented).toEqual([]);
  });
});
