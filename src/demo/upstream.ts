import { DurableObject } from 'cloudflare:workers';
import { envValues } from '../env-values.ts';
import { DemoOAuthTokens, type RefreshOptions, type TokenGrant } from './oauth-tokens.ts';
import { timePage } from './time-page.ts';
import { adoptEarlierUpdates, createDemoTables } from './upstream-tables.ts';
import {
  DEFAULT_DEMO,
  type DeleteKind,
  type DeletionsPage,
  type DemoSettings,
  type Failure,
  type MirrorFacts,
  type SessionFacts,
  type SessionRecord,
  type SessionsPage,
} from './upstream-types.ts';

export {
  DEFAULT_DEMO,
  type DemoSettings,
  type MirrorFacts,
  type SessionFacts,
  type SessionRecord,
} from './upstream-types.ts';

/** The demo upstream never produces more than this much history in one go (after a long pause). */
const MAX_CATCH_UP_MS = 60 * 60_000;
/** Sessions alive at once: a deleted one is replaced by a new one (a new id, never reused). */
const SESSION_COUNT = 40;
const STATUSES = ['active', 'idle', 'ended'] as const;

type UpdateRow = { seq: number; id: string; updated_at_ms: number; record: string };
type LiveSession = { id: string; updatedAtMs: number };

/**
 * A "sessions" API that only answers "what changed since date_from": it produces session
 * updates continuously, makes each visible only after a random replication lag, and fails
 * some requests, like the upstreams tidemark is built for. It also deletes sessions, as
 * upstreams do: most deletes are logged in a "deleted since" endpoint
 * (`/demo/sessions/deleted`), some are hard deletes that leave no trace but their absence
 * from the full listing (`/demo/sessions/all`), which only a reconciliation notices. A
 * deleted session never comes back; a new one (a new id) takes its place. It also keeps the
 * tokens of the demo's OAuth provider (`/demo/oauth/token`, oauth-tokens.ts).
 */
export class DemoUpstream extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** The demo OAuth provider's tokens (oauth-tokens.ts): its own table in this storage. */
  private readonly oauth: DemoOAuthTokens;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.oauth = new DemoOAuthTokens(ctx.storage);
    createDemoTables(this.sql);
    this.adoptEarlierUpdates();
  }

  /** An upstream from before deletes has its sessions' state read from its updates, once. */
  private adoptEarlierUpdates(): void {
    if (this.meta('next_session') !== null) return;
    this.ctx.storage.transactionSync(() => {
      const { nextSession, changes } = adoptEarlierUpdates(this.sql);
      this.setMeta('next_session', nextSession);
      this.setMeta('changes', changes);
    });
  }

  /** One page of sessions updated in `[from, to)` that are visible now, oldest first. */
  async sessions(query: {
    from: number;
    to: number | null;
    cursor: string | null;
    limit: number;
  }): Promise<SessionsPage> {
    const now = Date.now();
    const failure = this.serve(now);
    if (failure) return failure;
    const page = timePage<UpdateRow>(
      this.sql,
      'updates',
      'updated_at_ms',
      'seq, id, updated_at_ms, record',
      query,
      now,
    );
    return {
      ok: true,
      sessions: page.rows.map((row) => JSON.parse(row.record) as SessionRecord),
      next_cursor: page.next,
    };
  }

  /**
   * One page of the deletions log: sessions deleted in `[from, to)` whose delete is visible
   * now (it lags like an update), oldest first. The log starts when it is first asked for
   * (or at a backfill's start): recorded deletes before that are not in it.
   */
  async deleted(query: {
    from: number;
    to: number | null;
    cursor: string | null;
    limit: number;
  }): Promise<DeletionsPage> {
    const now = Date.now();
    this.sql.exec("INSERT OR IGNORE INTO demo_meta (key, value) VALUES ('log_from', ?)", now);
    const failure = this.serve(now);
    if (failure) return failure;
    const page = timePage<{ seq: number; id: string; deleted_at_ms: number }>(
      this.sql,
      'deletions',
      'deleted_at_ms',
      'seq, id, deleted_at_ms',
      query,
      now,
    );
    return {
      ok: true,
      deleted: page.rows.map((row) => ({
        id: row.id,
        deleted_at: new Date(row.deleted_at_ms).toISOString(),
      })),
      next_cursor: page.next,
    };
  }

  /**
   * One page of the full listing: every session alive now, by id, each at its latest
   * visible version (the listing reads the same lagging replica as the stream). A deleted
   * session is not in it from the moment it is deleted, whichever way.
   */
  async all(query: { cursor: string | null; limit: number }): Promise<SessionsPage> {
    const now = Date.now();
    const failure = this.serve(now);
    if (failure) return failure;
    const rows = this.sql
      .exec<{ id: string; visible_at_ms: number; record: string }>(
        `SELECT id, visible_at_ms, record FROM session_state
         WHERE deleted_at_ms IS NULL AND first_visible_at_ms <= ? AND id > ?
         ORDER BY id LIMIT ?`,
        now,
        query.cursor ?? '',
        query.limit,
      )
      .toArray();
    const sessions = rows.map((row) =>
      row.visible_at_ms <= now
        ? (JSON.parse(row.record) as SessionRecord)
        : this.visible(row.id, now),
    );
    const last = rows.at(-1);
    return {
      ok: true,
      sessions: sessions.filter((session): session is SessionRecord => session !== null),
      next_cursor: rows.length === query.limit && last ? last.id : null,
    };
  }

  /** Every update ever produced with updated_at below `below`, for the audit. */
  async produced(below: number): Promise<{ id: string; updated_at_ms: number }[]> {
    this.produceUntil(Date.now(), this.settings());
    return this.sql
      .exec<{ id: string; updated_at_ms: number }>(
        'SELECT id, updated_at_ms FROM updates WHERE updated_at_ms < ? ORDER BY updated_at_ms',
        below,
      )
      .toArray();
  }

  /**
   * Every session the upstream ever had, with what the audit compares the mirror with: its
   * latest update, the latest in the poller's scope `[from, below)`, and its delete.
   */
  async mirrorFacts(scope: { from: number; below: number }): Promise<MirrorFacts> {
    this.produceUntil(Date.now(), this.settings());
    const sessions = this.sql
      .exec<SessionFacts>(
        `SELECT s.id, s.created_at_ms, s.first_visible_at_ms, s.updated_at_ms,
           (SELECT MAX(u.updated_at_ms) FROM updates u
             WHERE u.id = s.id AND u.updated_at_ms >= ? AND u.updated_at_ms < ?) AS due_ms,
           s.deleted_at_ms, s.deleted_kind
         FROM session_state s ORDER BY s.id`,
        scope.from,
        scope.below,
      )
      .toArray();
    return { sessions, log_from: this.meta('log_from') };
  }

  /** Total updates produced so far. */
  async count(): Promise<number> {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM updates').one().n;
  }

  /** Sessions deleted so far, by kind. */
  async deletes(): Promise<Record<DeleteKind, number>> {
    const counts = { recorded: 0, hard: 0 };
    for (const row of this.sql.exec<{ kind: DeleteKind; n: number }>(
      `SELECT deleted_kind AS kind, COUNT(*) AS n FROM session_state
       WHERE deleted_kind IS NOT NULL GROUP BY deleted_kind`,
    )) {
      counts[row.kind] = row.n;
    }
    return counts;
  }

  /**
   * Produces the changes of a past period at once (tests use it instead of waiting): its
   * deletes too, and the deletions log holds those of that period.
   */
  async backfill(fromMs: number, toMs: number): Promise<number> {
    this.sql.exec(
      `INSERT INTO demo_meta (key, value) VALUES ('log_from', ?)
       ON CONFLICT (key) DO UPDATE SET value = MIN(value, excluded.value)`,
      fromMs,
    );
    return this.produce(fromMs, toMs, this.settings());
  }

  /** The demo OAuth provider's refresh_token grant: a new token pair, the presented one retired. */
  async oauthRefresh(presented: string, options: RefreshOptions): Promise<TokenGrant> {
    return this.oauth.refresh(presented, options);
  }

  /** Whether `access` is a live access token of the demo OAuth provider. */
  async oauthAccepts(access: string): Promise<boolean> {
    return this.oauth.accepts(access);
  }

  /** Catches production up to now, then fails the request now and then (a 503). */
  private serve(now: number): Failure | null {
    const settings = this.settings();
    this.produceUntil(now, settings);
    if (Math.random() < settings.errorRate) {
      return {
        ok: false,
        status: 503,
        error: 'demo upstream: temporarily unavailable (simulated)',
      };
    }
    return null;
  }

  /** A session's latest update visible at `now`, or null when none is yet. */
  private visible(id: string, now: number): SessionRecord | null {
    const row = this.sql
      .exec<{ record: string }>(
        `SELECT record FROM updates WHERE id = ? AND visible_at_ms <= ?
         ORDER BY updated_at_ms DESC, seq DESC LIMIT 1`,
        id,
        now,
      )
      .toArray()[0];
    return row === undefined ? null : (JSON.parse(row.record) as SessionRecord);
  }

  private produceUntil(now: number, settings: DemoSettings): void {
    const stored = this.meta('produced_until');
    // The first request starts the clock: the demo has no history before it.
    const from = Math.max(stored ?? now, now - MAX_CATCH_UP_MS);
    this.produce(from, now, settings);
  }

  private produce(fromMs: number, toMs: number, settings: DemoSettings): number {
    const count = Math.round(((toMs - fromMs) / 1000) * settings.perSecond);
    const stamps = Array.from({ length: count }, () =>
      Math.floor(fromMs + Math.random() * (toMs - fromMs)),
    ).sort((a, b) => a - b);
    const randomLag = () => Math.floor(Math.random() * settings.lagMs);
    this.ctx.storage.transactionSync(() => {
      let change = this.meta('changes') ?? 0;
      let nextSession = this.meta('next_session') ?? 1;
      const live: LiveSession[] = this.sql
        .exec<{ id: string; updated_at_ms: number }>(
          'SELECT id, updated_at_ms FROM session_state WHERE deleted_at_ms IS NULL ORDER BY id',
        )
        .toArray()
        .map((row) => ({ id: row.id, updatedAtMs: row.updated_at_ms }));
      stamps.forEach((stamp, index) => {
        // Now and then several sessions share one timestamp, as real upstreams do.
        const at = index > 0 && Math.random() < 0.1 ? (stamps[index - 1] ?? stamp) : stamp;
        const nth = change;
        change += 1;
        const every = settings.deleteEvery;
        if (every > 0 && nth % every === every - 1) {
          // A delete is the last thing that happens to a session: one whose updates are all
          // older (a backfill can produce changes before those already made).
          const candidates = live.filter((session) => session.updatedAtMs < at);
          const victim = candidates[Math.floor(Math.random() * candidates.length)];
          if (victim !== undefined) {
            const kind: DeleteKind = Math.floor(nth / every) % 3 === 2 ? 'hard' : 'recorded';
            this.remove(victim.id, at, kind, at + randomLag());
            live.splice(live.indexOf(victim), 1);
            return;
          }
        }
        let session = live[Math.floor(Math.random() * live.length)];
        if (live.length < SESSION_COUNT || session === undefined) {
          session = { id: `sess_${String(nextSession).padStart(3, '0')}`, updatedAtMs: at };
          nextSession += 1;
          live.push(session);
        }
        session.updatedAtMs = Math.max(session.updatedAtMs, at);
        this.update(
          {
            id: session.id,
            status: STATUSES[Math.floor(Math.random() * STATUSES.length)] ?? 'active',
            page_views: Math.floor(Math.random() * 100),
            updated_at: new Date(at).toISOString(),
          },
          at,
          at + randomLag(),
        );
      });
      this.setMeta('changes', change);
      this.setMeta('next_session', nextSession);
      this.sql.exec(
        "INSERT INTO demo_meta (key, value) VALUES ('produced_until', ?) ON CONFLICT(key) DO UPDATE SET value = MAX(value, excluded.value)",
        toMs,
      );
    });
    return count;
  }

  private update(record: SessionRecord, at: number, visibleAt: number): void {
    const text = JSON.stringify(record);
    this.sql.exec(
      'INSERT INTO updates (id, updated_at_ms, visible_at_ms, record) VALUES (?, ?, ?, ?)',
      record.id,
      at,
      visibleAt,
      text,
    );
    // The latest update is the session's state; an older one (a backfill) only moves its start.
    this.sql.exec(
      `INSERT INTO session_state (id, created_at_ms, first_visible_at_ms, updated_at_ms, visible_at_ms, record)
       VALUES (?1, ?2, ?3, ?2, ?3, ?4)
       ON CONFLICT (id) DO UPDATE SET
         created_at_ms = MIN(created_at_ms, excluded.created_at_ms),
         first_visible_at_ms = MIN(first_visible_at_ms, excluded.first_visible_at_ms),
         visible_at_ms = CASE WHEN excluded.updated_at_ms >= updated_at_ms
           THEN excluded.visible_at_ms ELSE visible_at_ms END,
         record = CASE WHEN excluded.updated_at_ms >= updated_at_ms
           THEN excluded.record ELSE record END,
         updated_at_ms = MAX(updated_at_ms, excluded.updated_at_ms)`,
      record.id,
      at,
      visibleAt,
      text,
    );
  }

  private remove(id: string, at: number, kind: DeleteKind, visibleAt: number): void {
    this.sql.exec(
      'UPDATE session_state SET deleted_at_ms = ?, deleted_kind = ? WHERE id = ?',
      at,
      kind,
      id,
    );
    if (kind === 'recorded') {
      this.sql.exec(
        'INSERT INTO deletions (id, deleted_at_ms, visible_at_ms) VALUES (?, ?, ?)',
        id,
        at,
        visibleAt,
      );
    }
  }

  private meta(key: string): number | null {
    const row = this.sql
      .exec<{ value: number }>('SELECT value FROM demo_meta WHERE key = ?', key)
      .toArray()[0];
    return row?.value ?? null;
  }

  private setMeta(key: string, value: number): void {
    this.sql.exec(
      `INSERT INTO demo_meta (key, value) VALUES (?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      key,
      value,
    );
  }

  private settings(): DemoSettings {
    const vars = envValues(this.env);
    const number = (name: string, fallback: number) => {
      const value = Number(vars[name]);
      return vars[name] === undefined || Number.isNaN(value) ? fallback : value;
    };
    return {
      lagMs: number('DEMO_LAG_MS', DEFAULT_DEMO.lagMs),
      errorRate: number('DEMO_ERROR_RATE', DEFAULT_DEMO.errorRate),
      perSecond: number('DEMO_PER_SECOND', DEFAULT_DEMO.perSecond),
      deleteEvery: Math.max(0, Math.floor(number('DEMO_DELETE_EVERY', DEFAULT_DEMO.deleteEvery))),
    };
  }
}
