import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { tokenExpired } from '../../src/config/resume.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { DeliveryItem, RunContext } from '../../src/engine/ports.ts';
import { ListingReconciler } from '../../src/engine/reconcile.ts';
import { HttpSource } from '../../src/sources/http-source.ts';
import { tombstoneRule } from '../../src/sources/tombstone.ts';

const MINUTE = 60_000;
const START = Date.parse('2026-09-01T00:00:00Z');

interface Event {
  id: string;
  summary: string;
  status: 'confirmed' | 'cancelled';
  /** The change number that last touched it. */
  seq: number;
}

/**
 * A calendar with Google's sync rules: a request without syncToken lists every event that is
 * not cancelled; with syncToken, what changed since it (cancelled ones too). Each page after
 * the first carries pageToken and repeats the round's own parameters, or is refused (400).
 */
class Calendar {
  seq = 0;
  readonly events = new Map<string, Event>();
  readonly requests: URL[] = [];
  pageSize = 2;
  /** A broken upstream: its last page holds no nextSyncToken. */
  dropToken = false;
  /** Written after each token's change number: a token as long as a real one. */
  tokenTail = '';
  /** Answers every request with this status, its body echoing the query. */
  failWith: number | null = null;
  /** Tokens of a change number below this expired: Google answers 410, a full sync needed. */
  expiredBelow = 0;
  /** Ids a full sync leaves out while the requests so far are fewer than `until`: a page skipped. */
  skipped: { ids: Set<string>; until: number } | null = null;

  put(id: string, summary: string, status: Event['status'] = 'confirmed'): void {
    this.seq += 1;
    this.events.set(id, { id, summary, status, seq: this.seq });
  }

  readonly fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    this.requests.push(url);
    if (this.failWith !== null) {
      return Response.json({ error: `cannot serve ${url.search}` }, { status: this.failWith });
    }
    const sync = url.searchParams.get('syncToken');
    const page = url.searchParams.get('pageToken');
    let offset = 0;
    let asOf = this.seq;
    if (page !== null) {
      const [at, of, from] = page.split(':');
      // Google: a page of a round repeats the round's parameters.
      if ((from ?? '') !== (sync ?? '')) return Response.json({ error: 'bad' }, { status: 400 });
      offset = Number(at);
      asOf = Number(of);
    }
    if (sync !== null && url.searchParams.get('showDeleted') !== 'true') {
      return Response.json({ error: 'showDeleted' }, { status: 400 });
    }
    const since = sync === null ? null : Number.parseInt(sync.slice(1), 10);
    if (since !== null && since < this.expiredBelow) {
      return Response.json({ error: { code: 410, message: 'fullSyncRequired' } }, { status: 410 });
    }
    const listed = [...this.events.values()]
      .filter((event) => event.seq <= asOf)
      .filter((event) => (since === null ? event.status !== 'cancelled' : event.seq > since))
      .filter(
        (event) =>
          since !== null ||
          this.skipped === null ||
          this.requests.length > this.skipped.until ||
          !this.skipped.ids.has(event.id),
      )
      .sort((a, b) => a.id.localeCompare(b.id));
    const items = listed
      .slice(offset, offset + this.pageSize)
      .map(({ id, summary, status }) => ({ id, summary, status }));
    const more = offset + this.pageSize < listed.length;
    return Response.json({
      items,
      ...(more
        ? { nextPageToken: `${offset + this.pageSize}:${asOf}:${sync ?? ''}` }
        : this.dropToken
          ? {}
          : { nextSyncToken: `t${asOf}${this.tokenTail}` }),
    });
  };
}

function world(
  options: { maxSubrequests?: number; resume?: Record<string, unknown>; log?: boolean } = {},
) {
  const clock = { now: START };
  const calendar = new Calendar();
  const entry = loadPoller(
    'calendar',
    {
      every: '1m',
      max_subrequests: options.maxSubrequests ?? 1000,
      source: {
        url: 'https://calendar.test/events',
        params: { maxResults: '2' },
        items: 'items',
        next: { type: 'cursor', param: 'pageToken', path: 'nextPageToken' },
        deleted: { path: 'status', equals: 'cancelled' },
        resume: {
          path: 'nextSyncToken',
          param: 'syncToken',
          params: { showDeleted: 'true' },
          ...options.resume,
        },
      },
      deliver: { type: 'handler', name: 'calendar' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  const config = entry.config;
  const logs: Record<string, unknown>[] = [];
  const got: DeliveryItem[] = [];
  const store = new MemoryStore();
  const ctx: RunContext = {
    poller: 'calendar',
    config,
    store,
    source: new HttpSource(config.source, calendar.fetch, [], () => clock.now),
    deliverer: {
      batch: 1,
      async deliver(items) {
        got.push(...items);
        return { kind: 'delivered' as const };
      },
    },
    now: () => clock.now,
    random: () => 0.5,
    isDeleted: tombstoneRule(config.source),
    log: (line) => logs.push(line),
    // As the wiring does: full rounds list, the reconciliation's turn delivers their deletes.
    ...(config.source.resume?.resync_deletes
      ? { reconcile: new ListingReconciler(null, null) }
      : {}),
  };
  const engine = new PollerEngine(ctx, { set: async () => {} });
  const run = async () => {
    clock.now += MINUTE;
    await engine.trigger('manual');
    return engine.onAlarm();
  };
  const shown = () => got.map((item) => `${item.op} ${item.update.id}`);
  return { calendar, store, run, got, shown, logs };
}

/** A request's query, sorted. */
function query(url: URL): string {
  return [...url.searchParams]
    .map(([key, value]) => `${key}=${value}`)
    .sort()
    .join('&');
}

describe('resume rounds start from the stored token', () => {
  it('asks source.url with source.params first, then the token with resume.params, each page repeating them', async () => {
    const w = world();
    w.calendar.put('a', 'A');
    w.calendar.put('b', 'B');
    w.calendar.put('c', 'C');
    await w.run();
    expect(w.shown()).toEqual(['upsert a', 'upsert b', 'upsert c']);
    expect(w.calendar.requests.map(query)).toEqual(['maxResults=2', 'maxResults=2&pageToken=2:3:']);
    expect(w.store.rounds.read().token).toBe('t3');
    w.calendar.put('b', 'B2');
    w.calendar.put('a', 'A', 'cancelled');
    w.calendar.put('d', 'D');
    w.calendar.requests.length = 0;
    await w.run();
    expect(w.shown().slice(3)).toEqual(['delete a', 'upsert b', 'upsert d']);
    const asked = w.calendar.requests.map(query);
    expect(asked).toEqual([
      'showDeleted=true&syncToken=t3',
      'pageToken=2:6:t3&showDeleted=true&syncToken=t3',
    ]);
    expect(w.store.rounds.read()).toMatchObject({ token: 't6', cursor: null });
  });

  it('a budget stop inside a round continues at its kept cursor and stores the token only at its end', async () => {
    // Three pages and three deliveries: more than one run's 4 requests.
    const w = world({ maxSubrequests: 4 });
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) w.calendar.put(id, id.toUpperCase());
    await w.run();
    const kept = w.store.rounds.read();
    expect(kept.token).toBeNull();
    expect(kept.cursor).not.toBeNull();
    w.calendar.requests.length = 0;
    for (let i = 0; i < 6 && w.store.rounds.read().token === null; i += 1) await w.run();
    expect(w.calendar.requests[0]?.searchParams.get('pageToken')).toBe(kept.cursor);
    expect(w.store.rounds.read().token).toBe('t6');
    expect(w.shown()).toEqual(['a', 'b', 'c', 'd', 'e', 'f'].map((id) => `upsert ${id}`));
  });

  it('a round whose last page holds no token fails and keeps the token it started from', async () => {
    const w = world();
    w.calendar.put('a', 'A');
    await w.run();
    w.calendar.dropToken = true;
    w.calendar.put('b', 'B');
    const run = await w.run();
    expect(run?.outcome).toBe('failed');
    expect(run?.error).toContain('holds no token at source.resume.path');
    expect(w.store.rounds.read().token).toBe('t1');
  });
});

describe("a round's token is never shown in full", () => {
  it('a failing page of a token round names its request with the token shortened', async () => {
    const w = world();
    w.calendar.tokenTail = '-Cg8I9pSt2MkCEAA';
    w.calendar.put('a', 'A');
    await w.run();
    const token = w.store.rounds.read().token ?? '';
    expect(token).toBe('t1-Cg8I9pSt2MkCEAA');
    w.calendar.failWith = 500;
    const run = await w.run();
    expect(run?.outcome).toBe('failed');
    expect(run?.error).toContain('syncToken=t1-Cg8…');
    expect(run?.error).not.toContain('I9pSt2MkCEAA');
  });

  it('a token that is a URL is shown without its query, in the request and in the body', async () => {
    const entry = loadPoller(
      'graph',
      {
        every: '1m',
        source: { url: 'https://graph.test/users/delta', resume: { path: '@odata.deltaLink' } },
        deliver: { type: 'handler', name: 'graph' },
      },
      {},
    );
    if (!entry.ok) throw new Error(entry.errors.join('; '));
    const token = 'https://graph.test/users/delta?$deltatoken=oEcOySpF_hWYmTIUZBOIuITR';
    const source = new HttpSource(
      entry.config.source,
      async (request) => Response.json({ error: { message: request.url } }, { status: 502 }),
      [],
      () => START,
    );
    const window = { from: 0, to: START, bounded: false, startedAt: START, cut: false };
    const page = await source.fetchPage({ ...window, round: { token } }, null);
    expect(page.ok).toBe(false);
    const error = page.ok ? '' : page.error;
    expect(error).toContain('GET https://graph.test/users/delta?…: HTTP 502');
    expect(error).not.toContain('oEcOySpF');
  });
});

/** A Graph-style source (deltaLink rounds, nextLink pages) answering every request with `answer`. */
function graphSource(answer: (url: URL) => Response) {
  const entry = loadPoller(
    'graph',
    {
      every: '1m',
      source: {
        url: 'https://graph.test/users/delta',
        items: 'value',
        next: { type: 'url', path: '@odata.nextLink' },
        resume: { path: '@odata.deltaLink' },
      },
      deliver: { type: 'handler', name: 'graph' },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  return new HttpSource(
    entry.config.source,
    async (request) => answer(new URL(request.url)),
    [],
    () => START,
  );
}

const FULL_ROUND = {
  from: 0,
  to: START,
  bounded: false,
  startedAt: START,
  cut: false,
  round: { token: null },
};
const SKIP = 'X0AJYQ3MlnBRrzKqYvPAZ5dcYqP5hv1hSBW';

describe('tokens a failed page quotes are shortened too', () => {
  it('a new skip token in an error body, as a link, a bare parameter or a JSON field, is shown shortened', async () => {
    const link = `https://graph.test/users/delta?$skiptoken=${SKIP}`;
    const source = graphSource(() =>
      Response.json(
        {
          error: { message: `cannot continue at ${link} ($skiptoken=${SKIP})` },
          '@odata.nextLink': link,
        },
        { status: 502 },
      ),
    );
    const page = await source.fetchPage(FULL_ROUND, null);
    const error = page.ok ? '' : page.error;
    expect(error).toContain('HTTP 502');
    expect(error).toContain('https://graph.test/users/delta?…');
    expect(error).toContain('$skiptoken=X0AJYQ…');
    expect(error).not.toContain('3MlnBRrz');
  });

  it('a page asked for by a next link names its request without the skip token', async () => {
    const source = graphSource(() => new Response('down', { status: 500 }));
    const page = await source.fetchPage(
      FULL_ROUND,
      `https://graph.test/users/delta?%24skiptoken=${SKIP}`,
    );
    const error = page.ok ? '' : page.error;
    expect(error).toContain('GET https://graph.test/users/delta?…: HTTP 500');
    expect(error).not.toContain('3MlnBRrz');
  });

  it('a Google page token an error body quotes keeps its first 6 characters', async () => {
    const body = JSON.stringify({
      nextPageToken: 'CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA',
      x: 'pageToken=CiAKGjBpNDd2',
    });
    const entry = loadPoller(
      'calendar',
      {
        every: '1m',
        source: {
          url: 'https://calendar.test/events',
          items: 'items',
          next: { type: 'cursor', param: 'pageToken', path: 'nextPageToken' },
          resume: { path: 'nextSyncToken', param: 'syncToken' },
        },
        deliver: { type: 'handler', name: 'calendar' },
      },
      {},
    );
    if (!entry.ok) throw new Error(entry.errors.join('; '));
    const source = new HttpSource(
      entry.config.source,
      async () => new Response(body, { status: 500 }),
      [],
      () => START,
    );
    const page = await source.fetchPage(FULL_ROUND, null);
    const error = page.ok ? '' : page.error;
    expect(error).toContain('CiAKGj…');
    expect(error).not.toContain('BpNDd2Nm');
    expect(error).not.toContain('pageToken=CiAKGjBp');
  });

  it('a paging loop of next links names the repeated link shortened', async () => {
    const link = `https://graph.test/users/delta?$skiptoken=${SKIP}`;
    const entry = loadPoller(
      'graph',
      {
        every: '1m',
        source: {
          url: 'https://graph.test/users/delta',
          items: 'value',
          next: { type: 'url', path: '@odata.nextLink' },
          resume: { path: '@odata.deltaLink' },
        },
        deliver: { type: 'handler', name: 'graph' },
      },
      {},
    );
    if (!entry.ok) throw new Error(entry.errors.join('; '));
    const store = new MemoryStore();
    const ctx: RunContext = {
      poller: 'graph',
      config: entry.config,
      store,
      source: new HttpSource(
        entry.config.source,
        async () => Response.json({ value: [{ id: 'u1' }], '@odata.nextLink': link }),
        [],
        () => START,
      ),
      deliverer: { batch: 10, deliver: async () => ({ kind: 'delivered' as const }) },
      now: () => START,
      random: () => 0.5,
    };
    const engine = new PollerEngine(ctx, { set: async () => {} });
    await engine.trigger('manual');
    const run = await engine.onAlarm();
    expect(run?.error).toContain('paging loop');
    expect(run?.error).toContain('https://graph.test/users/delta?…');
    expect(run?.error).not.toContain('3MlnBRrz');
  });
});

describe('an expired token is a resync', () => {
  it('starts a round from source.url in the same run, audited, and sends nothing unchanged again', async () => {
    const w = world();
    w.calendar.put('a', 'A');
    w.calendar.put('b', 'B');
    w.calendar.put('c', 'C');
    await w.run();
    expect(w.store.rounds.read().token).toBe('t3');
    w.calendar.put('b', 'B2');
    w.calendar.expiredBelow = 4;
    w.calendar.requests.length = 0;
    const run = await w.run();
    expect(run?.outcome).not.toBe('failed');
    expect(w.calendar.requests.map(query)).toEqual([
      'showDeleted=true&syncToken=t3',
      'maxResults=2',
      'maxResults=2&pageToken=2:4:',
    ]);
    // a and c come back unchanged from the full round: only b is sent.
    expect(w.shown().slice(3)).toEqual(['upsert b']);
    const round = w.store.rounds.read();
    expect(round).toMatchObject({ token: 't4', cursor: null });
    expect(round.resync?.reason).toContain('HTTP 410: the resume token expired');
    expect(w.store.audit.map((entry) => entry.action)).toEqual(['resume_resync']);
    // The rounds go on from the new token.
    w.calendar.put('d', 'D');
    await w.run();
    expect(w.shown().slice(4)).toEqual(['upsert d']);
  });

  it('an error code in the body listed in resume.expired.codes is an expiry too', () => {
    const expired = { status: [410], codes: ['syncStateNotFound'] };
    const body = { error: { code: 'syncStateNotFound', message: 'gone' } };
    expect(tokenExpired(expired, 400, body)).toBe(true);
    expect(tokenExpired(expired, 400, { error: { code: 'badRequest' } })).toBe(false);
    expect(tokenExpired({ status: [410], codes: [] }, 410, null)).toBe(true);
  });
});

describe('a record version without updated_at is its content', () => {
  it('a record listed unchanged in two rounds is delivered once, a changed one again', async () => {
    const w = world();
    w.calendar.put('a', 'A');
    w.calendar.put('b', 'B');
    await w.run();
    // A resync lists everything again (a round from source.url): only b changed.
    w.calendar.put('b', 'B2');
    w.store.round = { ...w.store.round, token: null };
    await w.run();
    expect(w.shown()).toEqual(['upsert a', 'upsert b', 'upsert b']);
    expect(w.got.map((item) => item.idempotencyKey)[2]).not.toBe(w.got[1]?.idempotencyKey);
  });
});

describe('resync_deletes: a full round is a complete listing', () => {
  /** a to f listed by a first full round, then a round from its token. */
  async function synced(resume: Record<string, unknown>) {
    const w = world({ resume });
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) w.calendar.put(id, id.toUpperCase());
    await w.run();
    w.calendar.put('a', 'A2');
    await w.run();
    return w;
  }

  it('a first round deletes nothing: no id is known before it', async () => {
    const w = world({ resume: { resync_deletes: true } });
    w.calendar.put('a', 'A');
    await w.run();
    expect(w.store.reconciliation.state().last).toMatchObject({ ids: 1, deletes: 0 });
    expect(w.shown()).toEqual(['upsert a']);
  });

  it('an id deleted while the token was expired is deleted once a second full round, started at once, lacks it too', async () => {
    const w = await synced({ resync_deletes: true, max_deletes: '50%' });
    const token = w.store.rounds.read().token;
    // b is deleted while the token has expired: the full sync no longer lists it.
    w.calendar.put('b', 'B', 'cancelled');
    w.calendar.expiredBelow = w.calendar.seq + 1;
    w.calendar.requests.length = 0;
    await w.run();
    // The token round (410), the resync's full round, and at once the round that confirms.
    expect(w.calendar.requests.map(query)).toEqual([
      `showDeleted=true&syncToken=${token}`,
      'maxResults=2',
      'maxResults=2&pageToken=2:8:',
      'maxResults=2&pageToken=4:8:',
      'maxResults=2',
      'maxResults=2&pageToken=2:8:',
      'maxResults=2&pageToken=4:8:',
    ]);
    expect(w.shown().slice(7)).toEqual(['delete b']);
    // The token the resync's round ended with is kept: rounds go on from it.
    expect(w.store.rounds.read()).toMatchObject({ token: 't8', cursor: null });
    w.calendar.put('c', 'C2');
    await w.run();
    expect(w.shown().slice(8)).toEqual(['upsert c']);
  });

  it('without resync_deletes, a resync misses a delete made while the token was expired', async () => {
    const w = await synced({});
    w.calendar.put('b', 'B', 'cancelled');
    w.calendar.expiredBelow = w.calendar.seq + 1;
    await w.run();
    expect(w.shown().slice(7)).toEqual([]);
    expect(w.store.rounds.read().token).toBe('t8');
  });

  it('an id one full round skipped and the confirming round lists is not deleted', async () => {
    const w = await synced({ resync_deletes: true, max_deletes: '50%' });
    w.calendar.expiredBelow = w.calendar.seq + 1;
    w.calendar.requests.length = 0;
    // The resync's round skips d (offset paging shifts); the round after it lists d again.
    w.calendar.skipped = { ids: new Set(['d']), until: 4 };
    await w.run();
    expect(w.calendar.requests.length).toBeGreaterThan(4);
    expect(w.shown().slice(7)).toEqual([]);
    expect(w.store.reconciliation.state()).toMatchObject({ confirming: false, held: null });
  });

  it('more than max_deletes are held, and go out on a confirm', async () => {
    const w = await synced({ resync_deletes: true, max_deletes: 1 });
    for (const id of ['b', 'c', 'd']) w.calendar.put(id, id, 'cancelled');
    w.calendar.expiredBelow = w.calendar.seq + 1;
    await w.run();
    expect(w.shown().slice(7)).toEqual([]);
    const held = w.store.reconciliation.state().held;
    expect(held).toMatchObject({ deletes: 3, known: 6 });
    expect(held?.reason).toContain('exceed max_deletes (1)');
    expect(w.logs.some((line) => line.event === 'resume_full_round' && line.level === 'warn')).toBe(
      true,
    );
    w.store.reconciliation.confirm(START + 60 * MINUTE);
    await w.run();
    expect(w.shown().slice(7).sort()).toEqual(['delete b', 'delete c', 'delete d']);
  });

  it('cannot be set with reconcile: both keep a listing in the same tables', () => {
    const entry = loadPoller(
      'calendar',
      {
        every: '1m',
        source: {
          url: 'https://calendar.test/events',
          resume: { path: 'nextSyncToken', resync_deletes: true },
        },
        reconcile: { every: '1h', url: 'https://calendar.test/all' },
        deliver: { type: 'handler', name: 'calendar' },
      },
      {},
    );
    expect(entry.ok ? '' : entry.errors.join('\n')).toContain(
      'source.resume.resync_deletes: cannot be set with reconcile',
    );
  });
});

describe('source.resume in a config', () => {
  const base = {
    every: '1m',
    source: { url: 'https://calendar.test/events', resume: { path: 'nextSyncToken' } },
    deliver: { type: 'handler', name: 'calendar' },
  };

  it('needs no from_param and no updated_at', () => {
    const entry = loadPoller('calendar', base, {});
    expect(entry.ok && entry.config.source.updated_at).toBeUndefined();
    expect(entry.ok).toBe(true);
  });

  it('refuses the keys of a time window', () => {
    const entry = loadPoller(
      'calendar',
      {
        ...base,
        start_from: '2026-01-01T00:00:00Z',
        lag_allowance: '1m',
        source: { ...base.source, to_param: 'until' },
      },
      {},
    );
    const errors = entry.ok ? [] : entry.errors.join('\n');
    expect(errors).toContain('start_from: does not apply with source.resume');
    expect(errors).toContain('lag_allowance: does not apply with source.resume');
    expect(errors).toContain('source.to_param: does not apply with source.resume');
  });

  it('a token URL on another origin than source.url is refused, not requested', async () => {
    const requests: string[] = [];
    const entry = loadPoller('graph', base, {});
    if (!entry.ok) throw new Error(entry.errors.join('; '));
    const source = new HttpSource(
      entry.config.source,
      async (request) => {
        requests.push(request.url);
        return Response.json([]);
      },
      [],
      () => START,
    );
    const window = { from: 0, to: START, bounded: false, startedAt: START, cut: false };
    const page = await source.fetchPage(
      { ...window, round: { token: 'https://elsewhere.test/delta?token=x' } },
      null,
    );
    expect(page).toMatchObject({ ok: false, kind: 'misconfigured' });
    expect(requests).toEqual([]);
  });
});
