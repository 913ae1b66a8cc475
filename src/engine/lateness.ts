import { formatDuration } from '../config/duration.ts';
import {
  countAtOrBelow,
  emptyHistogram,
  type LatenessHistogram,
  observe,
  quantile,
} from './lateness-histogram.ts';
import {
  type Coverage,
  type FailingUpdate,
  type LatenessMeasurement,
  type LatenessObserver,
  type LatenessSummary,
  ledgerKey,
  type NearMiss,
  type RunContext,
  type Update,
} from './ports.ts';
import { nextCheckpoint, type Window } from './window.ts';

/**
 * Observed lateness: how long after its `updated_at` the upstream first showed a record.
 *
 * Each window re-reads a little below the last one's end (`lag_allowance`, and `overlap`
 * below the checkpoint). A record delivered for the first time there, stamped below the end
 * of the last completed window, was asked for then and not returned: it was not visible at
 * that window's `T`. `T − updated_at` is then a lower bound of its visibility lag, within one
 * poll interval of the truth. Kept per poller as a histogram, it measures the lag that
 * `lag_allowance` must cover, instead of it being guessed.
 */
export class LatenessTally implements LatenessObserver {
  private readonly histogram = emptyHistogram();
  private nearMiss: NearMiss | null = null;
  private window: Window | null = null;
  /** C when the current window was planned. */
  private checkpoint: number | null = null;
  /** The current window follows `coverage`: its fresh records below `coverage.to` are late. */
  private measuring = false;
  private coveredNow = false;

  constructor(
    private readonly ctx: RunContext,
    private coverage: Coverage | null,
  ) {}

  seen(window: Window, fresh: Update[], failing: Map<string, FailingUpdate>): void {
    if (window !== this.window) this.start(window);
    const coverage = this.coverage;
    if (!this.measuring || coverage === null || this.checkpoint === null) return;
    let retried: Set<string> | null = null;
    for (const update of fresh) {
      // Below the window: the upstream truncates `from`, not a late record. At or above the
      // last window's end: new since then, not late.
      if (update.versionMs < window.from || update.versionMs >= coverage.to) continue;
      // A failure being retried was seen before: it is not new.
      retried ??= new Set([...failing.values()].map((f) => ledgerKey(f.id, f.version)));
      if (retried.has(ledgerKey(update.id, update.version))) continue;
      const latenessMs = coverage.at - update.versionMs;
      const nearMiss = update.versionMs < this.checkpoint;
      observe(this.histogram, latenessMs, nearMiss);
      if (nearMiss) {
        this.nearMiss = { id: update.id, version: update.version, latenessMs, at: this.ctx.now() };
      }
    }
  }

  covered(window: Window): void {
    if (window !== this.window) this.start(window);
    const from = this.checkpoint ?? window.from + this.ctx.config.overlap;
    this.coverage = {
      to: window.to,
      at: window.startedAt,
      checkpoint: nextCheckpoint(from, window, this.ctx.config.lag_allowance),
    };
    this.coveredNow = true;
  }

  /** What to keep of this run's measurement; null when there is nothing. */
  measurement(): LatenessMeasurement | null {
    if (this.histogram.count === 0 && !this.coveredNow) return null;
    return {
      histogram: this.histogram,
      nearMiss: this.nearMiss,
      coverage: this.coveredNow ? this.coverage : null,
    };
  }

  private start(window: Window): void {
    this.window = window;
    this.checkpoint = this.ctx.store.read().checkpoint;
    // Only a window planned from the checkpoint the covered window committed follows it: an
    // admin's move of C (which also clears the ledger) or a partial commit breaks the chain.
    this.measuring = this.coverage !== null && this.checkpoint === this.coverage.checkpoint;
  }
}

/** Above this share of lag_allowance, observed lateness is a warning. */
export const WARN_RATIO = 0.5;
/** Above this share, the poller is at risk of missing updates. */
export const RISK_RATIO = 0.8;

export type LatenessRisk = 'ok' | 'warning' | 'at_risk';

/** How the lateness of the last 24 h compares with lag_allowance, and what to do about it. */
export interface LatenessAssessment {
  risk: LatenessRisk;
  /** The highest lateness of the last 24 h over lag_allowance (null: nothing seen). */
  ratio: number | null;
  /** 2× the highest lateness of the last 24 h, in whole seconds (null: nothing seen). */
  suggestedMs: number | null;
  /** What status, the run's log line and the dashboard say; null when all is well. */
  warning: string | null;
}

/**
 * The verdict on observed lateness: a warning above WARN_RATIO of lag_allowance, at risk above
 * RISK_RATIO, and a near miss (a record later than lag_allowance, caught only by overlap)
 * always at risk, said loudly. The suggestion is twice the highest lateness seen.
 */
export function assessLateness(
  summary: LatenessSummary,
  config: { lag_allowance: number; overlap: number },
): LatenessAssessment {
  const recent = summary.last24h;
  if (recent.count === 0) return { risk: 'ok', ratio: null, suggestedMs: null, warning: null };
  const allowance = config.lag_allowance;
  const ratio = allowance === 0 ? Number.POSITIVE_INFINITY : recent.maxMs / allowance;
  const suggestedMs = Math.max(1_000, Math.ceil((2 * recent.maxMs) / 1_000) * 1_000);
  const raise = `raise lag_allowance to ${formatDuration(suggestedMs)} (2× the highest lateness seen)`;
  const seen = `records became visible up to ${seconds(recent.maxMs)} after their updated_at (last 24 h; p99 ${seconds(quantile(recent, 0.99) ?? 0)}, ${recent.count} late records)`;
  const of = `lag_allowance (${formatDuration(allowance)})`;
  if (recent.nearMisses > 0) {
    const last = summary.lastNearMiss;
    const example =
      last === null
        ? ''
        : `, the last id ${last.id} version ${last.version}, ${seconds(last.latenessMs)} late`;
    return {
      risk: 'at_risk',
      ratio,
      suggestedMs,
      warning: `NEAR MISS, at risk: ${recent.nearMisses} update${recent.nearMisses === 1 ? '' : 's'} in the last 24 h became visible later than ${of}${example}; only overlap (${formatDuration(config.overlap)}) caught ${recent.nearMisses === 1 ? 'it' : 'them'}, and one later still would be missed for good: ${raise}`,
    };
  }
  if (ratio > RISK_RATIO) {
    return {
      risk: 'at_risk',
      ratio,
      suggestedMs,
      warning: `at risk: ${seen}, ${percent(ratio)} of ${of}: an update later than lag_allowance is missed for good; ${raise}`,
    };
  }
  if (ratio > WARN_RATIO) {
    return {
      risk: 'warning',
      ratio,
      suggestedMs,
      warning: `observed lateness: ${seen}, more than half of ${of}: ${raise} before the upstream's lag outgrows it`,
    };
  }
  return { risk: 'ok', ratio, suggestedMs, warning: null };
}

/** The coarse, cumulative buckets shown in status and /metrics: powers of 4 seconds. */
export const COARSE_BOUNDS_SECONDS = [0.25, 1, 4, 16, 64, 256, 1024, 4096] as const;

/** A histogram's figures in seconds, for status, /metrics and logs. */
export function latenessFigures(histogram: LatenessHistogram) {
  const s = (ms: number | null) => (ms === null ? null : Math.round(ms) / 1000);
  const buckets = [
    ...COARSE_BOUNDS_SECONDS.map((bound) => ({
      le: String(bound),
      count: countAtOrBelow(histogram, bound * 1000),
    })),
    { le: '+Inf', count: histogram.count },
  ];
  return {
    count: histogram.count,
    p50_seconds: s(quantile(histogram, 0.5)),
    p99_seconds: s(quantile(histogram, 0.99)),
    max_seconds: histogram.count === 0 ? null : s(histogram.maxMs),
    near_misses: histogram.nearMisses,
    sum_seconds: histogram.sumMs / 1000,
    /** How many were at most each bound `le`, in seconds (cumulative, as Prometheus has them). */
    buckets,
  };
}

function seconds(ms: number): string {
  return ms >= 10_000 ? `${Math.round(ms / 1000)}s` : `${(ms / 1000).toFixed(1)}s`;
}

function percent(ratio: number): string {
  return Number.isFinite(ratio) ? `${Math.round(ratio * 100)}%` : 'more than all';
}
