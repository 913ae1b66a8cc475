import { runInDurableObject } from 'cloudflare:test';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import type { PreviewResult } from '../../src/preview/preview.ts';
import { pageText, pollerPage } from '../support/dashboard-page.ts';
import {
  alarmOf,
  api,
  createPoller,
  objectOf,
  runtimeConfig,
  setSecret,
} from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { CRM_OAUTH, installGuardedUpstream } from './fake-oauth.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { storeOf, writtenBehindTheStore } from './poller.ts';

const MINUTE = 60_000;
const { UPSTREAM_TOKEN } = TEST_SECRETS;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

/** A preview's answer, as src/preview/preview.ts types it. */
type Preview = PreviewResult;

async function previewOf(name: string, body?: unknown) {
  const reply = await api('POST', `/pollers/${name}/preview`, body);
  return { status: reply.status, body: (await reply.json()) as Preview & { error?: string } };
}

async function previewConfig(config: unknown, options: Record<string, unknown> = {}) {
  const reply = await api('POST', '/pollers/preview', { config, ...options });
  const body = (await reply.json()) as Preview & { error?: string; errors?: string[] };
  return { status: reply.status, body };
}

/** Every table of the poller's object, as rows; the lease and the write meters left out. */
async function storage(name: string) {
  return runInDurableObject(objectOf(name), (instance: Poller, state) => {
    storeOf(instance).flush();
    const tables = state.storage.sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name",
      )
      .toArray()
      .map((row) => row.name);
    const dump: Record<string, unknown[]> = {};
    for (const table of tables) {
      const rows = state.storage.sql.exec(`SELECT * FROM ${table}`).toArray();
      dump[table] =
        table === 'poller_state'
          ? rows.map((row) => {
              const {
                epoch: _epoch,
                lease_trigger: _trigger,
                lease_held: _held,
                lease_phase: _phase,
                lease_started_at: _started,
                lease_expires_at: _expires,
                rows_written: _rows,
                alarm_writes: _alarms,
                audit_rows: _auditRows,
                audit_bytes: _auditBytes,
                written_at: _written,
                ...kept
              } = row;
              return kept;
            })
          : rows;
    }
    writtenBehindTheStore(instance);
    return dump;
  });
}

async function status(name: string) {
  const reply = await api('GET', `/status/${name}`);
  return (await reply.json()) as {
    state: string;
    checkpoint: string | null;
    paused: boolean;
    counters: Record<string, number>;
    audit: { action: string; detail: Record<string, unknown> }[];
    warnings: string[];
    lag_seconds: number | null;
    lease: { epoch: number };
    storage: { tables: Record<string, unknown> };
  };
}

/**
 * Status without what an audit line and the preview's lease change (the lease's epoch, the
 * audit log and its bytes) or what the clock does (lag).
 */
function comparable(shown: Awaited<ReturnType<typeof status>>) {
  const { audit: _audit, lag_seconds: _lag, lease, storage: kept, ...rest } = shown;
  const { epoch: _epoch, ...leaseRest } = lease;
  const { audit_log: _auditTable, ...tables } = kept.tables;
  return { ...rest, lease: leaseRest, tables };
}

async function runs(name: string) {
  const reply = await api('GET', `/pollers/${name}/runs`);
  return ((await reply.json()) as { runs: unknown[] }).runs;
}

/** A runtime poller that sends its token as a query parameter too (to see it redacted). */
async function tokenInQuery(extra: Record<string, unknown> = {}) {
  return createPoller('preview', {
    sinceMs: 30 * MINUTE,
    source: { params: { per_page: '2', api_key: '${UPSTREAM_TOKEN}' }, ...extra },
  });
}

const recent = (minutes: number) => Date.now() - minutes * MINUTE;

describe('a preview of a poller by name', () => {
  it('shows each request with its secret redacted, the records, the window and the checkpoint a run would commit', async () => {
    const name = await tokenInQuery({ deleted: { path: 'status', equals: 'deleted' } });
    upstream.add('a', recent(20));
    upstream.add('b', recent(10), { fields: { status: 'deleted' } });
    upstream.add('c', recent(5));

    const { status: code, body } = await previewOf(name);

    expect(code).toBe(200);
    expect(body.requests).toHaveLength(2);
    for (const request of body.requests) {
      expect(request.method).toBe('GET');
      expect(request.status).toBe(200);
      expect(request.bytes).toBeGreaterThan(0);
      expect(request.url).toContain('api_key=***');
      expect(request.url).not.toContain(UPSTREAM_TOKEN);
    }
    expect(body.requests[1]?.url).toContain('cursor=2');
    expect(body.records.map((record) => [record.id, record.delete])).toEqual([
      ['a', false],
      ['b', true],
      ['c', false],
    ]);
    expect(body.records[0]).toMatchObject({
      updated_at: new Date(upstream.updates[0]?.updatedAtMs ?? 0).toISOString(),
      version: upstream.updates[0]?.updatedAt,
      record: { id: 'a', status: 'active' },
    });
    // Never run: the window starts at start_from, and a run would commit its end (R1).
    expect(body.checkpoint.from_source).toBe('start_from');
    expect(body.window.from).toBe(body.checkpoint.from);
    expect(body.complete).toBe(true);
    expect(body.checkpoint.would_commit).toBe(body.window.to);
    expect(body.warnings).toEqual([]);
    expect(receiver.deliveries).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('writes nothing (checkpoint, ledger, history, counters, failures, dead letters) and delivers nothing, but one audit line', async () => {
    const name = await tokenInQuery();
    upstream.add('a', recent(20));
    await api('POST', `/pollers/${name}/run`);
    expect(receiver.ids()).toEqual(['a']);
    // Stamped after the run's start: at or above its checkpoint.
    upstream.add('b', Date.now());
    upstream.add('c', Date.now() + 1000);
    const before = {
      status: await status(name),
      runs: await runs(name),
      storage: await storage(name),
      alarm: await alarmOf(name),
    };
    const asked = upstream.requests.length;

    const { status: code, body } = await previewOf(name, { from: 'checkpoint', pages: 5 });

    expect(code).toBe(200);
    expect(body.checkpoint.from_source).toBe('checkpoint');
    expect(body.checkpoint.from).toBe(before.status.checkpoint);
    expect(body.records.map((record) => record.id)).toEqual(['b', 'c']);
    expect(upstream.requests.length).toBeGreaterThan(asked);
    expect(receiver.ids()).toEqual(['a']);
    const after = {
      status: await status(name),
      runs: await runs(name),
      storage: await storage(name),
      alarm: await alarmOf(name),
    };
    expect(after.runs).toEqual(before.runs);
    expect(after.alarm).toBe(before.alarm);
    const { audit_log: auditBefore, ...tablesBefore } = before.storage;
    const { audit_log: auditAfter, ...tablesAfter } = after.storage;
    expect(tablesAfter).toEqual(tablesBefore);
    expect(auditAfter).toHaveLength((auditBefore?.length ?? 0) + 1);
    expect(comparable(after.status)).toEqual(comparable(before.status));
    expect(after.status.audit[0]).toMatchObject({
      action: 'preview',
      detail: { from_source: 'checkpoint', pages: 1, records: 2, complete: true },
    });
    await api('DELETE', `/pollers/${name}`);
  });

  it('previews a paused poller, which stays paused with no alarm', async () => {
    const name = await tokenInQuery();
    await api('POST', `/pollers/${name}/pause`, { reason: 'trying a config' });
    upstream.add('a', recent(3));
    expect(await alarmOf(name)).toBeNull();

    const { status: code, body } = await previewOf(name);

    expect(code).toBe(200);
    expect(body.records.map((record) => record.id)).toEqual(['a']);
    expect((await status(name)).paused).toBe(true);
    expect(await alarmOf(name)).toBeNull();
    expect(await runs(name)).toEqual([]);
    expect(receiver.deliveries).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('holds the lease while it reads: a run asked for meanwhile is skipped, and a preview is refused while a run holds it', async () => {
    const name = await tokenInQuery();
    upstream.add('a', recent(3));
    const held = upstream.holdNext();
    const previewing = previewOf(name);
    await held.arrived();

    const run = await api('POST', `/pollers/${name}/run`);
    expect(run.status).toBe(409);
    expect(await run.json()).toMatchObject({
      reason: 'lease_held',
      lease: { trigger: 'preview' },
    });
    held.release();
    expect((await previewing).status).toBe(200);

    const running = upstream.holdNext();
    const ran = api('POST', `/pollers/${name}/run`);
    await running.arrived();
    const refused = await previewOf(name);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain('holds the lease');
    running.release();
    expect((await ran).status).toBe(200);
    expect(receiver.ids()).toEqual(['a']);
    await api('DELETE', `/pollers/${name}`);
  });

  it('waits, as a run asked for now does, for the upstream\'s own "not before" (a rate limit)', async () => {
    const name = await tokenInQuery();
    const until = Date.now() + 10 * MINUTE;
    await runInDurableObject(objectOf(name), (instance: Poller, state) => {
      storeOf(instance).flush();
      state.storage.sql.exec('UPDATE poller_state SET rate_limited_until = ?', until);
      writtenBehindTheStore(instance);
    });

    const { status: code, body } = await previewOf(name);

    expect(code).toBe(409);
    expect(body.error).toContain(`no request before ${new Date(until).toISOString()}`);
    expect(upstream.requests).toHaveLength(0);
    await api('DELETE', `/pollers/${name}`);
  });

  it('starts at the time asked for and reads no more pages than asked', async () => {
    const name = await tokenInQuery();
    for (const [i, id] of ['a', 'b', 'c', 'd', 'e'].entries()) upstream.add(id, recent(50 - i));
    const from = new Date(recent(60)).toISOString();

    const { body } = await previewOf(name, { from, pages: 2 });

    expect(body.checkpoint).toMatchObject({ from, from_source: 'asked' });
    expect(body.requests).toHaveLength(2);
    expect(body.records.map((record) => record.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(body.complete).toBe(false);
    expect(body.checkpoint.note).toContain('stopped after 2 page(s)');
    await api('DELETE', `/pollers/${name}`);
  });

  it("keeps its warnings to itself: the poller's memo of next-page paths is not written", async () => {
    const name = await createPoller('preview-path', {
      sinceMs: 30 * MINUTE,
      source: { next: { type: 'cursor', param: 'cursor', path: 'meta.nxt' } },
    });
    answers({ sessions: [session('a', recent(5))], meta: { next: 'p2' } });

    const { body } = await previewOf(name);

    expect(body.warnings.map((warning) => warning.kind)).toEqual(['next_path_never_present']);
    const shown = await status(name);
    expect(shown.warnings.filter((warning) => warning.includes('next.path'))).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('keeps an OAuth token renewed on the way, as a run does (R17), and shows the token request with its secrets redacted', async () => {
    const fakes = installGuardedUpstream();
    ({ upstream, receiver } = fakes);
    const { provider } = fakes;
    const name = await createPoller('preview-oauth', {
      sinceMs: 10 * MINUTE,
      source: { headers: {}, auth: CRM_OAUTH },
    });
    await api('POST', `/pollers/${name}/pause`, {});
    await setSecret(name, 'CRM_CLIENT_SECRET', provider.clientSecret);
    await setSecret(name, 'CRM_REFRESH_TOKEN', provider.firstRefreshToken);
    upstream.add('a', recent(5));

    const { status: code, body } = await previewOf(name);

    expect(code).toBe(200);
    expect(body.records.map((record) => record.id)).toEqual(['a']);
    const [token, page] = body.requests;
    expect(token).toMatchObject({ method: 'POST', url: 'https://login.test/token', status: 200 });
    expect(token?.body).toContain('grant_type=refresh_token');
    expect(token?.body).toContain('refresh_token=***');
    expect(token?.body).not.toContain(provider.firstRefreshToken);
    expect(page?.status).toBe(200);
    expect(provider.renewals).toBe(1);
    // The first refresh token is retired now: the run works on with the one the preview kept.
    await api('POST', `/pollers/${name}/resume`);
    const run = await api('POST', `/pollers/${name}/run`);
    expect(await run.json()).toMatchObject({ outcome: 'success' });
    expect(receiver.ids()).toEqual(['a']);
    expect(provider.renewals).toBe(1);
    expect(provider.retiredPresented).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('is 404 for a poller that does not exist, and 400 for a body it cannot read', async () => {
    expect((await previewOf('no-such-poller')).status).toBe(404);
    const name = await tokenInQuery();
    const bad = await previewOf(name, { pages: 21 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('pages');
    expect(upstream.requests).toHaveLength(0);
    await api('DELETE', `/pollers/${name}`);
  });
});

/** An unsaved config of the fake upstream (runtimeConfig) starting an hour ago, `source` extended. */
function unsavedConfig(source: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) {
  const base = runtimeConfig();
  return {
    ...base,
    start_from: new Date(recent(60)).toISOString(),
    source: { ...base.source, ...source },
    ...rest,
  };
}

/** The upstream answers the next page with `body`. */
function answers(body: unknown, status = 200) {
  upstream.respondOnce(() => Response.json(body, { status }));
}

const session = (id: unknown, at: unknown, more: Record<string, unknown> = {}) => ({
  id,
  updated_at: typeof at === 'number' ? new Date(at).toISOString() : at,
  ...more,
});

describe('a preview of an unsaved config', () => {
  it('reads the window with no poller, stores nothing, and logs one audit line', async () => {
    upstream.add('a', recent(30));
    const logged = vi.spyOn(console, 'log');

    const { status: code, body } = await previewConfig(unsavedConfig(), { name: 'acme-sessions' });

    expect(code).toBe(200);
    expect(body.records.map((record) => record.id)).toEqual(['a']);
    expect(body.checkpoint.from_source).toBe('start_from');
    expect(receiver.deliveries).toEqual([]);
    const lines = logged.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.includes('"action":"preview"'));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      event: 'admin',
      poller: 'acme-sessions',
      action: 'preview',
    });
    const listed = await api('GET', '/pollers/acme-sessions/config');
    expect(listed.status).toBe(404);
  });

  it("shows each parent's first page of children as a run would deliver them, and warns of a child request that fails", async () => {
    answers({ sessions: [session('a', recent(30)), session('b', recent(20))] });
    upstream.respondOnce((request) => {
      expect(new URL(request.url).pathname).toBe('/v1/sessions/a/notes');
      expect(request.headers.get('authorization')).toBe(`Bearer ${UPSTREAM_TOKEN}`);
      return Response.json({ notes: [{ id: 1, text: 'hello' }] });
    });
    upstream.respondOnce(() => Response.json({ error: 'down' }, { status: 500 }));
    const config = unsavedConfig({
      children: { url: 'https://upstream.test/v1/sessions/{parent.id}/notes', items: 'notes' },
    });

    const { status: code, body } = await previewConfig(config);

    expect(code).toBe(200);
    expect(body.records.map((record) => record.id)).toEqual(['a', 'b', 'a/1']);
    expect(body.records[2]?.record).toEqual({ id: 1, text: 'hello' });
    expect(body.requests.map((request) => new URL(request.url).pathname)).toEqual([
      '/v1/sessions',
      '/v1/sessions/a/notes',
      '/v1/sessions/b/notes',
    ]);
    const failed = body.warnings.find((warning) => warning.kind === 'children_failed');
    expect(failed?.message).toContain('the children of b could not be read');
    expect(receiver.deliveries).toEqual([]);
  });

  it('warns of a child request answered 404, which a run takes as a parent gone meanwhile', async () => {
    answers({ sessions: [session('a', recent(30))] });
    upstream.respondOnce(() => Response.json({ error: 'no such route' }, { status: 404 }));
    const config = unsavedConfig({
      children: { url: 'https://upstream.test/v1/session/{parent.id}/notes', items: 'notes' },
    });

    const { body } = await previewConfig(config);

    const missing = body.warnings.find((warning) => warning.kind === 'children_missing');
    expect(missing?.message).toContain('check source.children.url');
  });

  it('answers 400 with every config error, sending nothing', async () => {
    const config = unsavedConfig(
      { url: 'not a url', items: 7 },
      { lease_ttl: 'soon', colour: 'blue' },
    );

    const { status: code, body } = await previewConfig(config);

    expect(code).toBe(400);
    expect(body.error).toBe('invalid poller config');
    const errors = body.errors ?? [];
    for (const key of ['source.url', 'source.items', 'lease_ttl', 'colour'])
      expect(
        errors.some((error) => error.includes(key)),
        `${key} in ${errors.join(' | ')}`,
      ).toBe(true);
    expect(upstream.requests).toHaveLength(0);
  });

  it('is held to FLEET_POLICY and the private-address rule, as PUT is', async () => {
    const refused = [
      unsavedConfig({ url: 'https://10.1.2.3/v1/sessions' }),
      unsavedConfig({ service: 'SELF' }),
      unsavedConfig({ headers: { Authorization: 'Bearer ${ADMIN_TOKEN}' } }),
      unsavedConfig({ max_body: '64MB' }),
    ];
    const said = [
      'not a public host',
      'FLEET_POLICY.bindings',
      'ADMIN_TOKEN',
      'FLEET_POLICY.max_body',
    ];

    for (const [index, config] of refused.entries()) {
      const { status: code, body } = await previewConfig(config);
      expect(code).toBe(400);
      expect((body.errors ?? []).join(' | ')).toContain(said[index]);
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('refuses a refresh_token grant without calling the token endpoint, and says to preview it by name', async () => {
    const tokenEndpoint = {
      calls: 0,
      handle: async () => {
        tokenEndpoint.calls += 1;
        return Response.json({ access_token: 'x', expires_in: 3600 });
      },
    };
    ({ upstream, receiver } = installFakes({ 'login.test': tokenEndpoint }));
    const { headers: _headers, ...source } = runtimeConfig().source;
    const auth = {
      type: 'oauth2',
      token_url: 'https://login.test/token',
      client_id: 'tidemark',
      client_secret: '${UPSTREAM_TOKEN}',
      refresh_token: '${UPSTREAM_TOKEN}',
    };
    const config = { ...unsavedConfig(), source: { ...source, auth } };

    const { status: code, body } = await previewConfig(config, { name: 'crm' });

    expect(code).toBe(422);
    expect(body.error).toContain('Create the poller paused');
    expect(body.error).toContain('POST /pollers/crm/preview');
    expect(tokenEndpoint.calls).toBe(0);
    expect(upstream.requests).toHaveLength(0);
  });

  it('asks for a client_credentials token, kept in memory for the preview only, its secret redacted', async () => {
    const fakes = installGuardedUpstream();
    ({ upstream, receiver } = fakes);
    const { provider } = fakes;
    // The client's secret is a Worker secret FLEET_POLICY.env lists: an unsaved config has no other.
    (provider as { clientSecret: string }).clientSecret = UPSTREAM_TOKEN;
    upstream.add('a', recent(5));
    const { headers: _headers, ...source } = runtimeConfig().source;
    const auth = {
      type: 'oauth2',
      grant: 'client_credentials',
      token_url: 'https://login.test/token',
      client_id: 'crm-client',
      client_secret: '${UPSTREAM_TOKEN}',
      client_auth: 'body',
    };

    const { status: code, body } = await previewConfig({
      ...unsavedConfig(),
      source: { ...source, auth },
    });

    expect(code).toBe(200);
    expect(body.records.map((record) => record.id)).toEqual(['a']);
    expect(body.requests.map((request) => [request.method, request.status])).toEqual([
      ['POST', 200],
      ['GET', 200],
    ]);
    expect(body.requests[0]?.body).toBe(
      'grant_type=client_credentials&client_id=crm-client&client_secret=***',
    );
    expect(provider.renewals).toBe(1);
  });

  it('applies max_body to each page, as a run does', async () => {
    answers({ sessions: [session('a', recent(5), { blob: 'x'.repeat(4096) })], next_cursor: null });

    const { body } = await previewConfig(unsavedConfig({ max_body: '1KB' }));

    expect(body.records).toEqual([]);
    expect(body.warnings.map((warning) => warning.kind)).toEqual(['page_error']);
    expect(body.warnings[0]?.message).toContain('max_body');
    expect(body.checkpoint.would_commit).toBeNull();
  });

  it('cuts a record over 2 KB', async () => {
    answers({ sessions: [session('a', recent(5), { blob: 'x'.repeat(3000) })], next_cursor: null });

    const { body } = await previewConfig(unsavedConfig());

    expect(body.records[0]).toMatchObject({
      id: 'a',
      record: null,
      record_bytes: expect.any(Number),
    });
    expect(new TextEncoder().encode(body.records[0]?.record_text).byteLength).toBe(2048);
  });
});

describe('what a preview warns of', () => {
  const cases: {
    kind: string;
    says: string;
    source?: Record<string, unknown>;
    rest?: Record<string, unknown>;
    pages: () => unknown[];
    status?: number;
  }[] = [
    {
      kind: 'next_path_never_present',
      says: 'source.next.path "meta.nxt"',
      source: { next: { type: 'cursor', param: 'cursor', path: 'meta.nxt' } },
      pages: () => [{ sessions: [session('a', recent(5))], meta: { next: 'p2' } }],
    },
    {
      kind: 'next_more_never_present',
      says: 'source.next.more "has_more"',
      source: { next: { type: 'cursor', param: 'cursor', path: 'next_cursor', more: 'has_more' } },
      pages: () => [{ sessions: [session('a', recent(5))], next_cursor: null }],
    },
    {
      kind: 'next_stop_never_present',
      says: 'source.next.stop "done"',
      source: { next: { type: 'cursor', param: 'cursor', path: 'next_cursor', stop: 'done' } },
      pages: () => [{ sessions: [session('a', recent(5))], next_cursor: null }],
    },
    {
      kind: 'outside_window',
      says: 'stamped outside the window',
      pages: () => [
        { sessions: [session('old', recent(120)), session('a', recent(5))], next_cursor: null },
      ],
    },
    {
      kind: 'out_of_order',
      says: 'id a at',
      source: { sorted: 'asc' },
      pages: () => [
        { sessions: [session('b', recent(5))], next_cursor: '1' },
        { sessions: [session('a', recent(10))], next_cursor: null },
      ],
    },
    {
      kind: 'malformed',
      says: 'cannot be read',
      pages: () => [
        { sessions: [session(undefined, recent(5)), session('b', 'yesterday')], next_cursor: null },
      ],
    },
    {
      kind: 'future',
      says: 'ahead of this Worker',
      pages: () => [{ sessions: [session('a', Date.now() + 3 * 3_600_000)], next_cursor: null }],
    },
    {
      kind: 'page_error',
      says: 'HTTP 500',
      status: 500,
      pages: () => [{ error: 'upstream broke' }],
    },
    {
      kind: 'body_errors',
      says: 'no field x on Query',
      pages: () => [
        {
          sessions: [session('a', recent(5))],
          errors: [{ message: 'no field x on Query' }],
          next_cursor: null,
        },
      ],
    },
    {
      kind: 'precision',
      says: 'whole seconds',
      pages: () => [
        {
          sessions: ['a', 'b', 'c', 'd', 'e'].map((id, i) =>
            session(id, Math.floor(recent(10 - i) / 1000) * 1000),
          ),
          next_cursor: null,
        },
      ],
    },
  ];

  it.each(cases)('$kind', async ({ kind, says, source, rest, pages, status: code }) => {
    for (const page of pages()) answers(page, code);

    const { body } = await previewConfig(unsavedConfig(source, rest));

    expect(body.warnings.map((warning) => warning.kind)).toEqual([kind]);
    expect(body.warnings[0]?.message).toContain(says);
  });

  it('a paging loop: it stops at the cursor sent twice and says a run would fail there, instead of reading on', async () => {
    answers({ sessions: [session('a', recent(5))], next_cursor: 'c1' });
    answers({ sessions: [session('b', recent(4))], next_cursor: 'c1' });
    for (let page = 0; page < 20; page += 1) {
      answers({ sessions: [session('b', recent(4))], next_cursor: 'c1' });
    }

    const { body } = await previewConfig(unsavedConfig(), { pages: 20 });

    expect(body.warnings.map((warning) => warning.kind)).toEqual(['paging_loop']);
    expect(body.warnings[0]?.message).toContain(
      'paging loop: the upstream sent a next page it had already sent in this window (c1)',
    );
    expect(body.requests).toHaveLength(2);
    expect(body.pages).toBe(2);
    expect(body.complete).toBe(false);
    expect(body.checkpoint.would_commit).toBeNull();
    expect(body.checkpoint.note).toContain('a run would fail there and keep its checkpoint');
  });

  it('none for pages that are what the config says', async () => {
    answers({ sessions: [session('a', recent(5)), session('b', recent(4))], next_cursor: null });

    const { body } = await previewConfig(unsavedConfig({ sorted: 'asc' }));

    expect(body.warnings).toEqual([]);
  });
});

describe('the preview routes in /openapi.json', () => {
  it('describes both, for ADMIN_TOKEN, with their bodies and the answer they share', async () => {
    const reply = await api('GET', '/openapi.json');
    const document = (await reply.json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const unsaved = document.paths['/pollers/preview']?.post;
    const named = document.paths['/pollers/{name}/preview']?.post;
    for (const operation of [unsaved, named]) {
      expect(operation?.security).toEqual([{ adminToken: [] }]);
      expect(JSON.stringify(operation?.responses)).toContain('#/components/schemas/Preview');
    }
    expect(JSON.stringify(unsaved?.requestBody)).toContain('"config"');
    expect(JSON.stringify(named?.requestBody)).toContain('"checkpoint"');
    expect(Object.keys(document.components.schemas.Preview?.properties ?? {}).sort()).toEqual([
      'checkpoint',
      'complete',
      'pages',
      'records',
      'requests',
      'warnings',
      'window',
    ]);
  });
});

describe('the dashboard', () => {
  it("has a Preview button on a poller's page, and says in words in its audit log what a preview found", async () => {
    const name = await tokenInQuery();
    upstream.add('a', recent(3));
    await previewOf(name);

    const html = await pollerPage(name);

    expect(html).toContain(`<button type="button" data-action="preview" data-poller="${name}"`);
    expect(pageText(html)).toMatch(
      /previewed from \S+ \S+Z: 1 record in 1 page, no warnings; nothing delivered/,
    );
    await api('DELETE', `/pollers/${name}`);
  });
});
