import { formatDuration } from '../config/duration.ts';
import type { PollerConfig } from '../config/schema.ts';
import { isoTime, isoTimeOrNull } from '../engine/iso-time.ts';
import { assessLateness, type LatenessAssessment, latenessFigures } from '../engine/lateness.ts';
import type { LatenessSummary, NudgeState } from '../engine/ports.ts';

/** What a poller's freshness store holds, as read for status. */
export interface FreshnessInput {
  lateness: LatenessSummary;
  nudges: NudgeState;
}

type Figures = ReturnType<typeof latenessFigures>;

/** `status.freshness`: observed lateness next to lag_allowance, and nudges. */
export interface FreshnessView {
  lag_allowance: string | null;
  lag_allowance_seconds: number | null;
  overlap: string | null;
  min_interval: string | null;
  lateness: {
    /** False with lag_allowance and overlap both 0: no record is read twice, none seen late. */
    measurable: boolean;
    /** ok; warning (above half of lag_allowance); at_risk (above 80%, or a near miss). */
    risk: LatenessAssessment['risk'];
    /** The highest lateness of the last 24 h over lag_allowance. */
    ratio: number | null;
    /** 2× the highest lateness of the last 24 h. */
    suggested_lag_allowance: string | null;
    last_24h: Figures;
    all_time: Figures;
    last_near_miss: {
      id: string;
      version: string;
      lateness_seconds: number;
      at: string;
    } | null;
  };
  nudges: {
    received: number;
    coalesced: number;
    acted_on: number;
    ignored: number;
    pending: boolean;
    pending_since: string | null;
  };
}

/** Shapes the freshness of a poller for status; `assessment` says what to warn about. */
export function freshnessView(
  input: FreshnessInput,
  config: PollerConfig | undefined,
): { view: FreshnessView; assessment: LatenessAssessment | null } {
  const assessment = config ? assessLateness(input.lateness, config) : null;
  const { lastNearMiss } = input.lateness;
  const ratio = assessment?.ratio ?? null;
  return {
    assessment,
    view: {
      lag_allowance: config ? formatDuration(config.lag_allowance) : null,
      lag_allowance_seconds: config ? config.lag_allowance / 1000 : null,
      overlap: config ? formatDuration(config.overlap) : null,
      min_interval: config ? formatDuration(config.min_interval) : null,
      lateness: {
        measurable: config ? config.lag_allowance + config.overlap > 0 : false,
        risk: assessment?.risk ?? 'ok',
        // JSON has no Infinity: lag_allowance 0 with anything late is "null, at risk".
        ratio: ratio === null || !Number.isFinite(ratio) ? null : Math.round(ratio * 100) / 100,
        suggested_lag_allowance:
          assessment?.suggestedMs == null ? null : formatDuration(assessment.suggestedMs),
        last_24h: latenessFigures(input.lateness.last24h),
        all_time: latenessFigures(input.lateness.allTime),
        last_near_miss:
          lastNearMiss === null
            ? null
            : {
                id: lastNearMiss.id,
                version: lastNearMiss.version,
                lateness_seconds: lastNearMiss.latenessMs / 1000,
                at: isoTime(lastNearMiss.at),
              },
      },
      nudges: {
        received: input.nudges.received,
        coalesced: input.nudges.coalesced,
        acted_on: input.nudges.actedOn,
        ignored: input.nudges.ignored,
        pending: input.nudges.pending,
        pending_since: isoTimeOrNull(input.nudges.since),
      },
    },
  };
}
