import { runInDurableObject } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { afterEach, describe, expect, it } from 'vitest';
import { STATIC_INCARNATION } from '../../src/catalog.ts';
import type { AuditReport } from '../../src/demo/audit.ts';
import { demoSessions } from '../../src/demo/handler.ts';
import type { DemoUpstream, SessionFacts, SessionRecord } from '../../src/demo/upstream.ts';
import type { HandlerContext } from '../../src/handlers/types.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
const read = { authorization: `Bearer ${TEST_SECRETS.STATUS_TOKEN}` };
const admin = { authorization: `Bearer ${TEST_SECRETS.ADMIN_TOKEN}` };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const demoOf = (name: string) => env.DEMO_UPSTREAM.get(env.DEMO_UPSTREAM.idFromName(name));

/** Every page of the demo's full listing (`/demo/sessions/all`), `limit` at a time. */
async function listAll(limit: number): Promise<SessionRecord[]> {
  const all: SessionRecord[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page += 1) {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const response = await exports.default.fetch(
      `https://tidemark.test/demo/sessions/all?limit=${limit}${query}`,
      { headers: read },
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      sessions: SessionRecord[];
      next_cursor: string | null;
    };
    all.push(...body.sessions);
    cursor = body.next_cursor;
    if (cursor === null) return all;
  }
  throw new Error('the listing never ended');
}

describe('the demo upstream deletes sessions', () => {
  it('logs two deletes in three in its deletions log, and hard-deletes the third without a trace', async () => {
    const demo = demoOf(`demo-${crypto.randomUUID()}`);
    const end = Date.now() - 10_000; // every change of the period is visible by now
    const changes = await demo.backfill(end - 10 * MINUTE, end);
    const { sessions } = await demo.mirrorFacts({ from: 0, below: end });

    // Every 40th change is a delete: two recorded, then one hard, and again.
    const deleted = sessions.filter((session) => session.deleted_at_ms !== null);
    const recorded = deleted.filter((session) => session.deleted_kind === 'recorded');
    const hard = deleted.filter((session) => session.deleted_kind === 'hard');
    expect(deleted.length).toBeGreaterThanOrEqual(Math.floor(changes / 40) - 2);
    expect(hard.length).toBeGreaterThan(0);
    expect(Math.abs(recorded.length - 2 * hard.length)).toBeLessThanOrEqual(2);
    expect(await demo.deletes()).toEqual({ recorded: recorded.length, hard: hard.length });
    // A delete is the last thing that happens to a session; a new session takes its place.
    for (const session of deleted) {
      expect(session.updated_at_ms).toBeLessThan(session.deleted_at_ms ?? 0);
    }
    // Forty alive (thirty-nine between a delete and the next change, which replaces it).
    const alive = sessions.filter((session) => session.deleted_at_ms === null).length;
    expect([39, 40]).toContain(alive);

    // The deletions log: the recorded deletes, oldest first, paged like the stream.
    const log: { id: string; deleted_at: string }[] = [];
    let cursor: string | null = null;
    do {
      const page = await demo.deleted({ from: end - 10 * MINUTE, to: end, cursor, limit: 7 });
      if (!page.ok) throw new Error(page.error);
      log.push(...page.deleted);
      cursor = page.next_cursor;
    } while (cursor !== null);
    const inPeriod = recorded.filter((session) => (session.deleted_at_ms ?? 0) < end);
    expect(log.map((entry) => Date.parse(entry.deleted_at))).toEqual(
      inPeriod.map((session) => session.deleted_at_ms ?? 0).sort((a, b) => a - b),
    );
    expect(new Set(log.map((entry) => entry.id))).toEqual(new Set(inPeriod.map((s) => s.id)));

    // The change stream still has the updates of every deleted session: it is history.
    const stream = await demo.sessions({
      from: end - 10 * MINUTE,
      to: end,
      cursor: null,
      limit: 500,
    });
    if (!stream.ok) throw new Error(stream.error);
    expect(stream.sessions.length).toBe(500);
  });

  it('lists the sessions alive, by id, paged, at their latest visible version; no deleted one', async () => {
    const demo = demoOf('demo');
    const end = Date.now() - 10_000;
    await demo.backfill(end - 10 * MINUTE, end);
    const before = await demo.mirrorFacts({ from: 0, below: end });

    const listed = await listAll(7);

    const after = await demo.mirrorFacts({ from: 0, below: end });
    const ids = listed.map((session) => session.id);
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(ids.length);
    const byId = (facts: { sessions: SessionFacts[] }) =>
      new Map(facts.sessions.map((session) => [session.id, session]));
    const was = byId(before);
    const now = byId(after);
    // Deleted (either way) before the listing: never listed. Alive through it: listed.
    for (const session of before.sessions) {
      if (session.deleted_at_ms !== null) expect(ids).not.toContain(session.id);
    }
    for (const session of after.sessions) {
      if (session.deleted_at_ms === null && session.first_visible_at_ms <= end) {
        expect(ids).toContain(session.id);
      }
    }
    for (const session of listed) {
      const facts = now.get(session.id) ?? was.get(session.id);
      expect(facts).toBeDefined();
      expect(Date.parse(session.updated_at)).toBeLessThanOrEqual(facts?.updated_at_ms ?? 0);
    }
  });

  it('takes over the sessions of an upstream from before deletes, and numbers new ones after them', async () => {
    const demo = demoOf(`demo-${crypto.randomUUID()}`);
    const t = Date.now() - 10 * MINUTE;
    // As an upstream of the demo before deletes left its storage: updates, nothing else.
    await runInDurableObject(demo, (instance: DemoUpstream, state) => {
      const sql = state.storage.sql;
      sql.exec('DELETE FROM session_state');
      sql.exec('DELETE FROM demo_meta');
      const record = (id: string, at: number) =>
        JSON.stringify({
          id,
          status: 'idle',
          page_views: 1,
          updated_at: new Date(at).toISOString(),
        });
      for (const [id, at] of [
        ['sess_001', t],
        ['sess_040', t + 1_000],
        ['sess_001', t + 2_000],
      ] as const) {
        sql.exec(
          'INSERT INTO updates (id, updated_at_ms, visible_at_ms, record) VALUES (?, ?, ?, ?)',
          id,
          at,
          at + 500,
          record(id, at),
        );
      }
      (instance as unknown as { adoptEarlierUpdates(): void }).adoptEarlierUpdates();
    });

    const before = await demo.mirrorFacts({ from: 0, below: Date.now() });
    expect(
      before.sessions.map(({ id, created_at_ms, updated_at_ms, due_ms, deleted_at_ms }) => ({
        id,
        created_at_ms,
        updated_at_ms,
        due_ms,
        deleted_at_ms,
      })),
    ).toEqual([
      {
        id: 'sess_001',
        created_at_ms: t,
        updated_at_ms: t + 2_000,
        due_ms: t + 2_000,
        deleted_at_ms: null,
      },
      {
        id: 'sess_040',
        created_at_ms: t + 1_000,
        updated_at_ms: t + 1_000,
        due_ms: t + 1_000,
        deleted_at_ms: null,
      },
    ]);
    await demo.backfill(t + 5_000, t + 65_000);
    const after = await demo.mirrorFacts({ from: 0, below: Date.now() });
    const ids = after.sessions.map((session) => session.id);
    const alive = after.sessions.filter((session) => session.deleted_at_ms === null);
    expect([39, 40]).toContain(alive.length);
    expect(ids.slice(0, 3)).toEqual(['sess_001', 'sess_040', 'sess_041']);
    expect(ids).not.toContain('sess_002'); // a number an earlier session may have had
  });

  it('serves /demo/sessions/deleted and /demo/sessions/all behind the read token, as the main endpoint', async () => {
    const from = new Date(Date.now() - 60 * MINUTE).toISOString();
    const url = `https://tidemark.test/demo/sessions/deleted?date_from=${from}&limit=5`;
    expect((await exports.default.fetch(url)).status).toBe(401);
    expect((await exports.default.fetch('https://tidemark.test/demo/sessions/all')).status).toBe(
      401,
    );
    const bad = 'https://tidemark.test/demo/sessions/deleted?date_from=soon';
    expect((await exports.default.fetch(bad, { headers: read })).status).toBe(400);

    const response = await exports.default.fetch(url, { headers: read });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      deleted: { id: string; deleted_at: string }[];
      next_cursor: string | null;
    };
    expect(body.deleted.length).toBeGreaterThan(0);
    expect(Object.keys(body.deleted[0] ?? {}).sort()).toEqual(['deleted_at', 'id']);
    expect(body.next_cursor).not.toBeNull();
  });
});

describe('the demo handler on a delete', () => {
  // The D1 database is the demo's: what these tests write goes, so the mirror stays the demo's.
  const written: string[] = [];
  afterEach(async () => {
    for (const id of written.splice(0)) {
      await env.DB.batch([
        env.DB.prepare('DELETE FROM sessions WHERE id = ?').bind(id),
        env.DB.prepare('DELETE FROM session_versions WHERE id = ?').bind(id),
        env.DB.prepare('DELETE FROM session_deletes WHERE id = ?').bind(id),
      ]);
    }
  });
  const fresh = (prefix: string) => {
    const id = `${prefix}_${crypto.randomUUID().slice(0, 8)}`;
    written.push(id);
    return id;
  };
  const call = (op: 'upsert' | 'delete', id: string, at: number, record: unknown = null) =>
    demoSessions(record ?? { id, updated_at: new Date(at).toISOString() }, {
      op,
      poller: 'demo_sessions',
      id,
      version: new Date(at).toISOString(),
      idempotencyKey: `demo_sessions:${id}:${new Date(at).toISOString()}`,
      attempt: 1,
      env,
      signal: new AbortController().signal,
    } satisfies HandlerContext);
  const row = (id: string) =>
    env.DB.prepare('SELECT updated_at_ms, deleted FROM sessions WHERE id = ?')
      .bind(id)
      .first<{ updated_at_ms: number; deleted: number }>();
  const deletesOf = async (id: string) =>
    (
      await env.DB.prepare('SELECT COUNT(*) AS n FROM session_deletes WHERE id = ?')
        .bind(id)
        .first<{ n: number }>()
    )?.n;

  it('marks the session deleted at the delete version, once however often it comes', async () => {
    const id = fresh('sess_del');
    const t = Date.now() - 10 * MINUTE;
    await call('upsert', id, t);
    await call('delete', id, t + MINUTE);
    await call('delete', id, t + MINUTE);
    expect(await row(id)).toEqual({ updated_at_ms: t + MINUTE, deleted: 1 });
    expect(await deletesOf(id)).toBe(1);
  });

  it('ignores a delete older than what D1 holds, and a late older update after a delete', async () => {
    const id = fresh('sess_old');
    const t = Date.now() - 10 * MINUTE;
    await call('upsert', id, t + 2 * MINUTE);
    await call('delete', id, t + MINUTE); // older than the version held: the session stays
    expect(await row(id)).toEqual({ updated_at_ms: t + 2 * MINUTE, deleted: 0 });

    await call('delete', id, t + 3 * MINUTE);
    await call('upsert', id, t + 2 * MINUTE + 1); // late, and older than the delete
    expect(await row(id)).toEqual({ updated_at_ms: t + 3 * MINUTE, deleted: 1 });
    // A delete received first (no row yet) keeps a tombstone that an older update cannot undo.
    const first = fresh('sess_first');
    await call('delete', first, t + MINUTE);
    await call('upsert', first, t);
    expect(await row(first)).toEqual({ updated_at_ms: t + MINUTE, deleted: 1 });
  });

  it('deletes at a version equal to the one held; a newer update brings the session back', async () => {
    const id = fresh('sess_eq');
    const t = Date.now() - 10 * MINUTE;
    await call('upsert', id, t);
    await call('delete', id, t);
    expect(await row(id)).toEqual({ updated_at_ms: t, deleted: 1 });
    await call('upsert', id, t + 1);
    expect(await row(id)).toEqual({ updated_at_ms: t + 1, deleted: 0 });
  });

  it("takes an upsert without a version (a listing without reconcile.updated_at) at its record's updated_at", async () => {
    const id = fresh('sess_nov');
    const t = Date.now() - 10 * MINUTE;
    await demoSessions(
      { id, updated_at: new Date(t).toISOString() },
      {
        op: 'upsert',
        poller: 'demo_sessions',
        id,
        version: '',
        idempotencyKey: `demo_sessions:${id}:`,
        attempt: 1,
        env,
        signal: new AbortController().signal,
      },
    );
    expect(await row(id)).toEqual({ updated_at_ms: t, deleted: 0 });
  });
});

describe('the demo poller with deletes: the deletions stream, then a reconciliation', () => {
  // Backfills 10 minutes of demo traffic, polls it, waits out lag_allowance, and has a
  // listing run: seconds of real work and one real wait, in real workerd.
  it('mirrors the upstream in D1: recorded deletes by the stream, hard ones by the listing, and the audit says so', {
    timeout: 90_000,
  }, async () => {
    const demo = demoOf('demo');
    const poller = newPoller('demo_sessions', 'demo_sessions');
    const start = Date.now() - 10 * MINUTE;
    await demo.backfill(start, Date.now());
    await poller.setCheckpoint(start);
    // The deletions stream has its own checkpoint, which starts at the first run otherwise.
    await poller.sql(
      `INSERT INTO deletions_stream (id, checkpoint) VALUES (1, ?)
       ON CONFLICT (id) DO UPDATE SET checkpoint = excluded.checkpoint`,
      start,
    );
    const audit = async () => {
      const response = await exports.default.fetch('https://tidemark.test/demo/audit', {
        headers: read,
      });
      expect(response.status).toBe(200);
      return (await response.json()) as AuditReport;
    };
    const liveInD1 = async (ids: string[]) => {
      const rows = await env.DB.prepare('SELECT id FROM sessions WHERE deleted = 0').all<{
        id: string;
      }>();
      const live = new Set(rows.results.map((row) => row.id));
      return ids.filter((id) => live.has(id));
    };

    await poller.tick();

    expect((await poller.status()).last_run?.outcome).toBe('success');
    const polled = await audit();
    expect(polled.missing_below_checkpoint).toBe(0);
    expect(polled.deletes.recorded).toBeGreaterThan(0);
    expect(polled.deletes.from_deletions_stream).toBeGreaterThan(0);
    expect(polled.deletes.from_reconcile).toBe(0);
    expect(polled.mirror).toMatchObject({ equal: true, ghosts: 0, missing: 0, stale: 0 });
    // The hard deletes left no trace: D1 still has those sessions, until a listing.
    const { sessions } = await demo.mirrorFacts({ from: 0, below: 0 });
    const hard = sessions
      .filter((session) => session.deleted_kind === 'hard' && (session.deleted_at_ms ?? 0) > start)
      .map((session) => session.id);
    const ghosts = await liveInD1(hard);
    expect(ghosts.length).toBeGreaterThan(0);
    expect(polled.mirror.in_flight).toBeGreaterThanOrEqual(ghosts.length);
    const recorded = sessions
      .filter((session) => session.deleted_kind === 'recorded')
      .filter((session) => (session.deleted_at_ms ?? 0) < Date.parse(polled.checkpoint ?? ''))
      .map((session) => session.id);
    expect(await liveInD1(recorded)).toEqual([]);

    // A listing deletes what it lacks of the ids delivered before its start − lag_allowance (5s).
    await sleep(5_500);
    const requested = await exports.default.fetch(
      'https://tidemark.test/pollers/demo_sessions/reconcile',
      { method: 'POST', headers: admin },
    );
    expect(requested.status).toBe(202);
    await poller.settle();
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const reconcile = (await poller.status()).reconcile;
      // The deletes of the first listing go out when the second, at once, confirms them.
      const confirmed = reconcile?.last_listing?.outcome === 'agreed';
      if (confirmed && reconcile?.pending === 0) break;
      // A run stops before the listing when its next tick is due: the next run goes on.
      await sleep(200);
      await poller.trigger('manual');
      await poller.settle();
    }

    const status = await poller.status();
    expect(status.reconcile?.last_listing).toMatchObject({ outcome: 'agreed' });
    expect(status.reconcile?.last_listing?.deletes).toBeGreaterThanOrEqual(ghosts.length);
    expect(status.reconcile?.held).toBeNull();
    expect(await liveInD1(ghosts)).toEqual([]);
    const reconciled = await audit();
    expect(reconciled.missing_below_checkpoint).toBe(0);
    expect(reconciled.deletes.from_reconcile).toBeGreaterThanOrEqual(ghosts.length);
    expect(reconciled.deletes_delivered).toBe(
      reconciled.deletes.from_deletions_stream + reconciled.deletes.from_reconcile,
    );
    expect(reconciled.mirror).toMatchObject({ equal: true, ghosts: 0, missing: 0, stale: 0 });
    expect(reconciled.mirror.as_of.last_listing).toBe(status.reconcile?.last_listing?.started_at);
    expect(reconciled.mirror.upstream_live).toBeGreaterThan(0);

    // The check bites: a session deleted before the listing but alive in D1 is a ghost; a
    // session delivered below the checkpoint but gone from D1 is missing. (Paused: no run
    // mends D1 meanwhile.)
    await poller.stub().setPaused(STATIC_INCARNATION, true, 'test: tampering with D1');
    const [ghost] = ghosts;
    const current = await demo.mirrorFacts({ from: 0, below: 0 });
    const alive = current.sessions.find(
      (session) =>
        session.deleted_at_ms === null &&
        session.updated_at_ms < Date.parse(reconciled.checkpoint ?? ''),
    );
    if (ghost === undefined || alive === undefined) throw new Error('nothing to tamper with');
    const saved = await env.DB.prepare('SELECT * FROM sessions WHERE id = ?')
      .bind(alive.id)
      .first<Record<string, unknown>>();
    await env.DB.batch([
      env.DB.prepare('UPDATE sessions SET deleted = 0 WHERE id = ?').bind(ghost),
      env.DB.prepare('DELETE FROM sessions WHERE id = ?').bind(alive.id),
    ]);
    const tampered = await audit();
    expect(tampered.mirror).toMatchObject({ equal: false, ghosts: 1, missing: 1 });
    expect(tampered.mirror.sample.map((entry) => [entry.id, entry.kind]).sort()).toEqual(
      [
        [ghost, 'ghost'],
        [alive.id, 'missing'],
      ].sort(),
    );
    await env.DB.prepare('UPDATE sessions SET deleted = 1 WHERE id = ?').bind(ghost).run();
    if (saved) {
      await env.DB.prepare(
        `INSERT INTO sessions (id, updated_at, updated_at_ms, record, deleted, upserted_at_ms)
         VALUES (?, ?, ?, ?, ?, ?)`,
      )
        .bind(
          saved.id,
          saved.updated_at,
          saved.updated_at_ms,
          saved.record,
          saved.deleted,
          saved.upserted_at_ms,
        )
        .run();
    }
    await poller.stub().setPaused(STATIC_INCARNATION, false, null);
  });
});
