import { DurableObject } from 'cloudflare:workers';
import { envValues } from '../env-values.ts';

/** The demo's knobs, overridable with vars (tests turn the noise off). */
export interface DemoSettings {
  /** Longest replication lag: an update stamped t is visible from t + random(0…lag). */
  lagMs: number;
  /** Share of page requests answered with a 503. */
  errorRate: number;
  /** Updates produced per second of wall time. */
  perSecond: number;
}

export const DEFAULT_DEMO: DemoSettings = { lagMs: 3_000, errorRate: 0.05, perSecond: 2 };

/** The demo upstream never produces more than this much history in one go (after a long pause). */
const MAX_CATCH_UP_MS = 60 * 60_000;
const SESSION_COUNT = 40;
const STATUSES = ['active', 'idle', 'ended'] as const;

export interface SessionRecord {
  id: string;
  status: (typeof STATUSES)[number];
  page_views: number;
  updated_at: string;
}

export type SessionsPage =
  | { ok: true; sessions: SessionRecord[]; next_cursor: string | null }
  | { ok: false; status: number; error: string };

type UpdateRow = { seq: number; id: string; updated_at_ms: number; record: string };

/**
 * A "sessions" API that only answers "what changed since date_from": it produces session
 * updates continuously, makes each visible only after a random replication lag, and fails
 * some requests, like the upstreams tidemark is built for.
 */
export class DemoUpstream extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS updates (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL,
      updated_at_ms INTEGER NOT NULL,
      visible_at_ms INTEGER NOT NULL,
      record TEXT NOT NULL
    )`);
    this.sql.exec('CREATE INDEX IF NOT EXISTS updates_by_time ON updates (updated_at_ms, seq)');
    this.sql.exec(
      'CREATE TABLE IF NOT EXISTS demo_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)',
    );
  }

  /** One page of sessions updated in `[from, to)` that are visible now, oldest first. */
  async sessions(query: {
    from: number;
    to: number | null;
    cursor: string | null;
    limit: number;
  }): Promise<SessionsPage> {
    const settings = this.settings();
    const now = Date.now();
    this.produceUntil(now, settings);
    if (Math.random() < settings.errorRate) {
      return {
        ok: false,
        status: 503,
        error: 'demo upstream: temporarily unavailable (simulated)',
      };
    }
    const [afterMs, afterSeq] = decodeCursor(query.cursor);
    const rows = this.sql
      .exec<UpdateRow>(
        `SELECT seq, id, updated_at_ms, record FROM updates
         WHERE updated_at_ms >= ? AND updated_at_ms < ? AND visible_at_ms <= ?
           AND (updated_at_ms > ? OR (updated_at_ms = ? AND seq > ?))
         ORDER BY updated_at_ms, seq LIMIT ?`,
        query.from,
        query.to ?? Number.MAX_SAFE_INTEGER,
        now,
        afterMs,
        afterMs,
        afterSeq,
        query.limit,
      )
      .toArray();
    const last = rows.at(-1);
    return {
      ok: true,
      sessions: rows.map((row) => JSON.parse(row.record) as SessionRecord),
      next_cursor: rows.length === query.limit && last ? `${last.updated_at_ms}.${last.seq}` : null,
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

  /** Total updates produced so far. */
  async count(): Promise<number> {
    return this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM updates').one().n;
  }

  /** Produces the updates of a past period at once (tests use it instead of waiting). */
  async backfill(fromMs: number, toMs: number): Promise<number> {
    return this.produce(fromMs, toMs, this.settings());
  }

  private produceUntil(now: number, settings: DemoSettings): void {
    const stored = this.sql
      .exec<{ value: number }>("SELECT value FROM demo_meta WHERE key = 'produced_until'")
      .toArray()[0];
    // The first request starts the clock: the demo has no history before it.
    const from = Math.max(stored?.value ?? now, now - MAX_CATCH_UP_MS);
    this.produce(from, now, settings);
  }

  private produce(fromMs: number, toMs: number, settings: DemoSettings): number {
    const count = Math.round(((toMs - fromMs) / 1000) * settings.perSecond);
    const stamps = Array.from({ length: count }, () =>
      Math.floor(fromMs + Math.random() * (toMs - fromMs)),
    ).sort((a, b) => a - b);
    this.ctx.storage.transactionSync(() => {
      stamps.forEach((stamp, index) => {
        // Now and then several sessions share one timestamp, as real upstreams do.
        const at = index > 0 && Math.random() < 0.1 ? (stamps[index - 1] ?? stamp) : stamp;
        const record: SessionRecord = {
          id: `sess_${String(1 + Math.floor(Math.random() * SESSION_COUNT)).padStart(3, '0')}`,
          status: STATUSES[Math.floor(Math.random() * STATUSES.length)] ?? 'active',
          page_views: Math.floor(Math.random() * 100),
          updated_at: new Date(at).toISOString(),
        };
        this.sql.exec(
          'INSERT INTO updates (id, updated_at_ms, visible_at_ms, record) VALUES (?, ?, ?, ?)',
          record.id,
          at,
          at + Math.floor(Math.random() * settings.lagMs),
          JSON.stringify(record),
        );
      });
      this.sql.exec(
        "INSERT INTO demo_meta (key, value) VALUES ('produced_until', ?) ON CONFLICT(key) DO UPDATE SET value = MAX(value, excluded.value)",
        toMs,
      );
    });
    return count;
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
    };
  }
}

function decodeCursor(cursor: string | null): [number, number] {
  const match = cursor ? /^(\d+)\.(\d+)$/.exec(cursor) : null;
  return match ? [Number(match[1]), Number(match[2])] : [-1, -1];
}
