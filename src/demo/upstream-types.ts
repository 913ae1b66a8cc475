/** What the demo upstream (upstream.ts) serves and is set with: its records, pages and knobs. */

/** The demo's knobs, overridable with vars (tests turn the noise off). */
export interface DemoSettings {
  /** Longest replication lag: an update stamped t is visible from t + random(0…lag). */
  lagMs: number;
  /** Share of page requests answered with a 503. */
  errorRate: number;
  /** Updates produced per second of wall time. */
  perSecond: number;
  /**
   * Every this-many-th change the upstream makes is a delete (0: none). Of every three
   * deletes, two are recorded in the deletions log and one is a hard delete, without trace.
   */
  deleteEvery: number;
}

export const DEFAULT_DEMO: DemoSettings = {
  lagMs: 3_000,
  errorRate: 0.05,
  perSecond: 2,
  deleteEvery: 40,
};

export interface SessionRecord {
  id: string;
  status: 'active' | 'idle' | 'ended';
  page_views: number;
  updated_at: string;
}

/** An entry of the deletions log (`/demo/sessions/deleted`). */
export interface DeletedSession {
  id: string;
  deleted_at: string;
}

/** How a session was deleted: logged in the deletions endpoint, or gone without a trace. */
export type DeleteKind = 'recorded' | 'hard';

export type Failure = { ok: false; status: number; error: string };

export type SessionsPage =
  | { ok: true; sessions: SessionRecord[]; next_cursor: string | null }
  | Failure;

export type DeletionsPage =
  | { ok: true; deleted: DeletedSession[]; next_cursor: string | null }
  | Failure;

/** What the upstream holds of one session, for the audit's mirror check. */
export type SessionFacts = {
  id: string;
  /** Its first update, and when that became visible (the listing shows it from then). */
  created_at_ms: number;
  first_visible_at_ms: number;
  /** Its latest update. */
  updated_at_ms: number;
  /** Its latest update stamped in the poller's scope `[from, below)`, if any. */
  due_ms: number | null;
  deleted_at_ms: number | null;
  deleted_kind: DeleteKind | null;
};

export interface MirrorFacts {
  sessions: SessionFacts[];
  /** The deletions log holds the recorded deletes from here on (null: nobody asked yet). */
  log_from: number | null;
}
