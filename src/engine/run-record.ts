// A run's line of history, and the triggers and outcomes it names (re-exported by ports.ts).

/**
 * What took the lease: a run's trigger, or an admin's dead-letter replay or preview (which
 * run no poll).
 */
export type TriggerKind =
  | 'cron'
  | 'manual'
  | 'retry'
  | 'continuation'
  | 'recovery'
  | 'replay'
  | 'preview'
  | 'nudge'
  | 'startup';

/**
 * A run asked for now: by an operator (`manual`, kept in the audit log), or by `npm start`
 * for each poller's first run (`startup`, not an operator's action: no audit line).
 */
export type RunNowKind = Extract<TriggerKind, 'manual' | 'startup'>;

/** `partial`: the run caught up, with some updates left failing, stored and retried (R19). */
export type RunOutcome =
  | 'success'
  | 'partial'
  | 'failed'
  | 'skipped'
  | 'recovered'
  | 'fenced'
  | 'continued';

/** One line of run history. */
export interface RunRecord {
  epoch: number;
  trigger: TriggerKind;
  outcome: RunOutcome;
  startedAt: number;
  finishedAt: number;
  windows: number;
  pages: number;
  records: number;
  /** Updates moved to the dead letters by this run (R8). */
  deadLettered: number;
  /** deliver.changes_only: versions not sent, their content the one last delivered. */
  unchanged?: number;
  /** source.children: the requests for children, of `pages`. */
  childRequests?: number;
  error: string | null;
  /** C when the run ended. */
  checkpoint: number | null;
}
