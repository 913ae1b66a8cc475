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
    // Read first: a write, even one that changes nothing, writes the deferred state row first.
    if (this.host.row().first_seen_at !== null) return;
    this.host.write(
      'UPDATE poller_state SET first_seen_at = ? WHERE id = 1 AND first_seen_at IS NULL',
      now,
    );
  }

  firstSeenAt(): number | null {
    return this.host.row().first_seen_at;
  }

  lastReport(): LastReport | null {
    const text = this.host.row().last_report;
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
    // Deferred (StoreHost.defer): written with the state row's next write, so a report costs
    // the poller no row of its own. Only a memo of what was sent: lost in a crash, the next
    // run reports again.
    this.host.defer({ last_report: JSON.stringify(report) }, report.at);
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
