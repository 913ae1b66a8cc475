// Owns poller_state.first_seen_at and poller_state.last_report.
import {
  booleanAt,
  jsonObject,
  numberAt,
  numberOrNull,
  StoredValueError,
  stringAt,
} from './checked.ts';
import type { StoreHost } from './host.ts';

/** What the poller last told the registry, and when. */
export interface LastReport {
  state: string;
  checkpoint: number | null;
  deadLetters: number;
  /** Absent in a report written before alerts were reported. */
  atFault?: boolean;
  at: number;
}

/**
 * Owns two columns of the state row about the poller's presence, not its runs:
 * `poller_state.first_seen_at`, when the object first saw its poller (a poller that never
 * runs is noticed from there: status `silent`), and `poller_state.last_report`, what it last
 * told the registry (a report is sent only when that changed).
 */
export class Presence {
  constructor(private readonly host: StoreHost) {}

  /** Notes when this object first saw its poller (a status call, a trigger): once. */
  seen(now: number): void {
    this.host.write(
      'UPDATE poller_state SET first_seen_at = ? WHERE id = 1 AND first_seen_at IS NULL',
      now,
    );
  }

  firstSeenAt(): number | null {
    return this.host.row().first_seen_at;
  }

  lastReport(): LastReport | null {
    const text = this.host.sql
      .exec<{ last_report: string | null }>('SELECT last_report FROM poller_state WHERE id = 1')
      .one().last_report;
    if (text === null) return null;
    try {
      return lastReportOf(text);
    } catch (error) {
      // Only a memo of what was sent: one not as written is sent again, and so rewritten.
      if (error instanceof StoredValueError) return null;
      throw error;
    }
  }

  setLastReport(report: Required<LastReport>): void {
    // In the state row, whose write brings the write counters up to date: a report made
    // after a run's end is counted in storage at once, not at the next run.
    this.host.updateState('last_report = ?', 'WHERE id = 1', JSON.stringify(report));
  }
}

/** A report as setLastReport wrote it (or migration 12 moved it from `meta`), checked. */
function lastReportOf(text: string): LastReport {
  const column = 'poller_state.last_report';
  const report = jsonObject(text, column);
  return {
    state: stringAt(report.state, column),
    checkpoint: numberOrNull(report.checkpoint, column),
    deadLetters: numberAt(report.deadLetters, column),
    ...(report.atFault === undefined ? {} : { atFault: booleanAt(report.atFault, column) }),
    at: numberAt(report.at, column),
  };
}
