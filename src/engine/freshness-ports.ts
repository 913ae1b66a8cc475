import type { LatenessHistogram } from './lateness-histogram.ts';
import type { FailingUpdate, Update } from './ports.ts';
import type { Window } from './window.ts';

/**
 * The freshness ports (nudges and observed lateness, engine/nudge.ts and engine/lateness.ts):
 * their storage beside the PollerStore, and the run's lateness observer. Re-exported by
 * ports.ts with the engine's other ports.
 */

/** Nudges received and what became of them (engine/nudge.ts). */
export interface NudgeState {
  /** A nudge waits for a run that starts after it. */
  pending: boolean;
  /** When the pending nudge came (the first of those coalesced into it). */
  since: number | null;
  /** Every authenticated nudge. */
  received: number;
  /** Folded into a nudge already pending: no run of their own. */
  coalesced: number;
  /** Runs that started with a nudge pending: the nudges acted on. */
  actedOn: number;
  /** Received while the poller was paused or disabled: nothing done. */
  ignored: number;
}

/** What the last window that completed asked the upstream for, and when. */
export interface Coverage {
  /** Its end (`to`): every update stamped below it and visible at `at` was returned. */
  to: number;
  /** Its `T`. */
  at: number;
  /** The checkpoint its completion committed: a window planned from another one is not compared. */
  checkpoint: number;
}

/** A record found only because of `overlap`: later than lag_allowance, nearly missed. */
export interface NearMiss {
  id: string;
  version: string;
  latenessMs: number;
  /** When it was seen. */
  at: number;
}

/** What one run measured of the upstream's visibility lag. */
export interface LatenessMeasurement {
  histogram: LatenessHistogram;
  /** The latest near miss of the run, if any. */
  nearMiss: NearMiss | null;
  /** The last window the run completed, if any. */
  coverage: Coverage | null;
}

/** The lateness kept: the last 24 hours (by the hour) and all time. */
export interface LatenessSummary {
  last24h: LatenessHistogram;
  allTime: LatenessHistogram;
  lastNearMiss: NearMiss | null;
}

/**
 * Durable state of nudges and of observed lateness, beside the PollerStore: small, bounded
 * (one row, and at most 25 histogram rows), and never part of a run's fenced commits.
 */
export interface FreshnessStore {
  nudges(): NudgeState;
  /** Counts one nudge; `pending` also marks a run as wanted since `at`. */
  recordNudge(outcome: 'pending' | 'coalesced' | 'ignored', at: number): void;
  /** A run starts: a pending nudge is acted on (cleared and counted). Says whether one was. */
  takeNudge(): boolean;
  coverage(): Coverage | null;
  /** Adds a run's measurement: its lateness to this hour's and the all-time histogram. */
  recordLateness(at: number, measured: LatenessMeasurement): void;
  lateness(now: number): LatenessSummary;
}

/** Sees the records of a run as they come, to measure how late the upstream showed them. */
export interface LatenessObserver {
  /** The updates of a page not delivered before (`fresh`), with the failures still pending. */
  seen(window: Window, fresh: Update[], failing: Map<string, FailingUpdate>): void;
  /** The window completed: every page was fetched and every update handled. */
  covered(window: Window): void;
}
