import { type LatenessHistogram, merge, parseBuckets } from '../engine/lateness-histogram.ts';
import { HOUR_MS, HOURS_KEPT } from '../engine/memory-freshness.ts';
import type {
  Coverage,
  FreshnessStore,
  LatenessMeasurement,
  LatenessSummary,
  NearMiss,
  NudgeState,
} from '../engine/ports.ts';
import { IDLE_WRITE_EVERY_MS } from './store/idle-runs.ts';

type FreshnessRow = {
  nudge_pending: number;
  nudge_since: number | null;
  nudges_received: number;
  nudges_coalesced: number;
  nudges_acted_on: number;
  nudges_ignored: number;
  covered_to: number | null;
  covered_at: number | null;
  covered_checkpoint: number | null;
  last_near_miss: string | null;
};

type LatenessRow = {
  slot: number;
  buckets: string;
  count: number;
  sum_ms: number;
  max_ms: number;
  near_misses: number;
};

/** The slot of the all-time histogram; the others are hours since the epoch. */
const ALL_TIME = -1;

/**
 * FreshnessStore over the poller's SQLite (tables `freshness` and `lateness`, migration 11):
 * one row of nudge state and coverage, and at most HOURS_KEPT + 1 histogram rows. A run adds
 * at most three row writes (coverage, this hour, all time); a nudge one.
 */
export class SqliteFreshness implements FreshnessStore {
  private readonly sql: SqlStorage;
  /** Rows written by this instance, for cost checks. */
  rowsWritten = 0;
  /**
   * The coverage of runs that saw no late record, waiting in memory like an idle run's end
   * (IDLE_WRITE_EVERY_MS): written with the next lateness write, or once the one on disk is
   * that old. A crash or an eviction loses it: the next run measures lateness from the
   * coverage written before, so records late by less than the lost runs' windows go
   * uncounted once.
   */
  private waiting: Coverage | null = null;

  constructor(
    private readonly storage: DurableObjectStorage,
    /** The object's life this store was made for: once it ended, writes are refused. */
    private readonly life: { readonly live: boolean } = { live: true },
  ) {
    this.sql = storage.sql;
  }

  nudges(): NudgeState {
    const row = this.row();
    return {
      pending: row.nudge_pending === 1,
      since: row.nudge_since,
      received: row.nudges_received,
      coalesced: row.nudges_coalesced,
      actedOn: row.nudges_acted_on,
      ignored: row.nudges_ignored,
    };
  }

  recordNudge(outcome: 'pending' | 'coalesced' | 'ignored', at: number): void {
    this.write(
      `UPDATE freshness SET nudges_received = nudges_received + 1,
         nudges_coalesced = nudges_coalesced + ?, nudges_ignored = nudges_ignored + ?,
         nudge_since = CASE WHEN ? AND nudge_pending = 0 THEN ? ELSE nudge_since END,
         nudge_pending = CASE WHEN ? THEN 1 ELSE nudge_pending END
       WHERE id = 1`,
      outcome === 'coalesced' ? 1 : 0,
      outcome === 'ignored' ? 1 : 0,
      outcome === 'pending' ? 1 : 0,
      at,
      outcome === 'pending' ? 1 : 0,
    );
  }

  takeNudge(): boolean {
    return (
      this.write(
        `UPDATE freshness SET nudge_pending = 0, nudge_since = NULL,
           nudges_acted_on = nudges_acted_on + 1
         WHERE id = 1 AND nudge_pending = 1`,
      ) > 0
    );
  }

  coverage(): Coverage | null {
    if (this.waiting !== null) return this.waiting;
    const row = this.row();
    if (row.covered_to === null || row.covered_at === null || row.covered_checkpoint === null)
      return null;
    return { to: row.covered_to, at: row.covered_at, checkpoint: row.covered_checkpoint };
  }

  recordLateness(at: number, measured: LatenessMeasurement): void {
    const { nearMiss, histogram } = measured;
    if (measured.coverage !== null && nearMiss === null && histogram.count === 0) {
      this.waiting = measured.coverage;
      const writtenAt = this.row().covered_at ?? Number.NEGATIVE_INFINITY;
      if (at - writtenAt < IDLE_WRITE_EVERY_MS) return;
    }
    const coverage = measured.coverage ?? this.waiting;
    this.waiting = null;
    this.storage.transactionSync(() => {
      if (coverage !== null || nearMiss !== null) {
        this.write(
          `UPDATE freshness SET covered_to = COALESCE(?, covered_to), covered_at = COALESCE(?, covered_at),
             covered_checkpoint = COALESCE(?, covered_checkpoint),
             last_near_miss = COALESCE(?, last_near_miss)
           WHERE id = 1`,
          coverage?.to ?? null,
          coverage?.at ?? null,
          coverage?.checkpoint ?? null,
          nearMiss === null ? null : JSON.stringify(nearMiss),
        );
      }
      if (histogram.count === 0) return;
      const hour = Math.floor(at / HOUR_MS);
      this.add(hour, histogram);
      this.add(ALL_TIME, histogram);
      this.write('DELETE FROM lateness WHERE slot >= 0 AND slot <= ?', hour - HOURS_KEPT);
    });
  }

  lateness(now: number): LatenessSummary {
    const hour = Math.floor(now / HOUR_MS);
    const rows = this.sql
      .exec<LatenessRow>(
        'SELECT * FROM lateness WHERE slot = ? OR (slot > ? AND slot <= ?)',
        ALL_TIME,
        hour - HOURS_KEPT,
        hour,
      )
      .toArray();
    const histograms = rows.map((row) => ({ slot: row.slot, histogram: fromRow(row) }));
    const last = this.row().last_near_miss;
    return {
      last24h: merge(...histograms.filter((h) => h.slot !== ALL_TIME).map((h) => h.histogram)),
      allTime: merge(...histograms.filter((h) => h.slot === ALL_TIME).map((h) => h.histogram)),
      lastNearMiss: last === null ? null : (JSON.parse(last) as NearMiss),
    };
  }

  /** Adds a histogram into a slot's row (read, merged, written back: the row stays small). */
  private add(slot: number, histogram: LatenessHistogram): void {
    const stored = this.sql
      .exec<LatenessRow>('SELECT * FROM lateness WHERE slot = ?', slot)
      .toArray()[0];
    const total = stored ? merge(fromRow(stored), histogram) : histogram;
    this.write(
      `INSERT INTO lateness (slot, buckets, count, sum_ms, max_ms, near_misses) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (slot) DO UPDATE SET buckets = excluded.buckets, count = excluded.count,
         sum_ms = excluded.sum_ms, max_ms = excluded.max_ms, near_misses = excluded.near_misses`,
      slot,
      JSON.stringify(total.buckets),
      total.count,
      Math.round(total.sumMs),
      Math.round(total.maxMs),
      total.nearMisses,
    );
  }

  private row(): FreshnessRow {
    return this.sql.exec<FreshnessRow>('SELECT * FROM freshness WHERE id = 1').one();
  }

  private write(query: string, ...bindings: unknown[]): number {
    if (!this.life.live) return 0; // the object was erased: its successor's rows
    const cursor = this.sql.exec(query, ...bindings);
    cursor.toArray();
    this.rowsWritten += cursor.rowsWritten;
    return cursor.rowsWritten;
  }
}

function fromRow(row: LatenessRow): LatenessHistogram {
  return {
    buckets: parseBuckets(row.buckets),
    count: row.count,
    sumMs: row.sum_ms,
    maxMs: row.max_ms,
    nearMisses: row.near_misses,
  };
}
