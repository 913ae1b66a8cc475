import { emptyHistogram, type LatenessHistogram, merge } from './lateness-histogram.ts';
import type {
  Coverage,
  FreshnessStore,
  LatenessMeasurement,
  LatenessSummary,
  NearMiss,
  NudgeState,
} from './ports.ts';

/** Lateness is kept by the hour; the last 24 hours are the current hour and the 23 before it. */
export const HOUR_MS = 3_600_000;
export const HOURS_KEPT = 24;

/** FreshnessStore in memory, with the same contract as the SQLite one (engine tests, sim). */
export class MemoryFreshness implements FreshnessStore {
  private state: NudgeState = {
    pending: false,
    since: null,
    received: 0,
    coalesced: 0,
    actedOn: 0,
    ignored: 0,
  };
  private covered: Coverage | null = null;
  private readonly hours = new Map<number, LatenessHistogram>();
  private allTime = emptyHistogram();
  private lastNearMiss: NearMiss | null = null;

  nudges(): NudgeState {
    return { ...this.state };
  }

  recordNudge(outcome: 'pending' | 'coalesced' | 'ignored', at: number): void {
    this.state.received += 1;
    if (outcome === 'coalesced') this.state.coalesced += 1;
    if (outcome === 'ignored') this.state.ignored += 1;
    if (outcome === 'pending' && !this.state.pending) {
      this.state.pending = true;
      this.state.since = at;
    }
  }

  takeNudge(): boolean {
    if (!this.state.pending) return false;
    this.state = { ...this.state, pending: false, since: null, actedOn: this.state.actedOn + 1 };
    return true;
  }

  coverage(): Coverage | null {
    return this.covered === null ? null : { ...this.covered };
  }

  recordLateness(at: number, measured: LatenessMeasurement): void {
    if (measured.coverage !== null) this.covered = { ...measured.coverage };
    if (measured.nearMiss !== null) this.lastNearMiss = { ...measured.nearMiss };
    if (measured.histogram.count === 0) return;
    const hour = Math.floor(at / HOUR_MS);
    this.hours.set(hour, merge(this.hours.get(hour) ?? emptyHistogram(), measured.histogram));
    this.allTime = merge(this.allTime, measured.histogram);
    for (const kept of this.hours.keys()) if (kept <= hour - HOURS_KEPT) this.hours.delete(kept);
  }

  lateness(now: number): LatenessSummary {
    const hour = Math.floor(now / HOUR_MS);
    const recent = [...this.hours].filter(([kept]) => kept > hour - HOURS_KEPT && kept <= hour);
    return {
      last24h: merge(...recent.map(([, histogram]) => histogram)),
      allTime: merge(this.allTime),
      lastNearMiss: this.lastNearMiss === null ? null : { ...this.lastNearMiss },
    };
  }
}
