// Owns the runs table (a ring), the run counters and the idle run in poller_state.
import type { RunRecord } from '../../engine/ports.ts';
import {
  jsonFields,
  jsonObject,
  known,
  numberAt,
  numberOrNull,
  RUN_OUTCOMES,
  stringOrNull,
  TRIGGER_KINDS,
} from './checked.ts';
import type { StoreHost } from './host.ts';

/** Runs kept in history. */
export const HISTORY_LIMIT = 100;

export interface Counters {
  runs: number;
  successes: number;
  failures: number;
  continued: number;
  skipped: number;
  recoveries: number;
  records_delivered: number;
  /** Dead letters pruned for age (dead_letter_retention) or beyond DEAD_LETTER_CAP. */
  dead_letters_pruned: number;
}

/**
 * A run as history keeps it: with its id (one number per run, skipped and idle runs too,
 * never reused), and for idle runs folded together, the first of them.
 */
export interface StoredRun extends RunRecord {
  id: number;
  /** Idle runs in a row fold into one line: it stands for ids `firstId` to `id`. */
  folded?: { firstId: number; firstStartedAt: number };
}

type RunRow = {
  seq: number;
  first_seq: number | null;
  epoch: number;
  trigger: string;
  outcome: string;
  started_at: number;
  finished_at: number;
  windows: number;
  pages: number;
  records: number;
  dead_lettered: number;
  child_requests: number | null;
  error: string | null;
  checkpoint: number | null;
};

/**
 * What a run's end sets in the state row for history: the counters, and the idle run waiting
 * there (or none). Bound by finishBindings.
 */
export const FINISH_SET = `runs = runs + 1,
  successes = successes + ?, failed_runs = failed_runs + ?, continued_runs = continued_runs + ?,
  records_delivered = records_delivered + ?, idle_run = ?`;

/**
 * Owns the `runs` table, a ring of HISTORY_LIMIT slots (migration 12), and the history kept
 * in the state row: the run counters and the idle run (`poller_state.idle_run`). An idle run
 * (a success that found nothing) waits in the state row, and goes into the ring only when a
 * run that did something follows it: a quiet poller's runs write no history row.
 */
export class History {
  constructor(private readonly host: StoreHost) {}

  /** The latest runs, newest first: the idle one waiting in the state row, then the ring. */
  runs(limit = HISTORY_LIMIT): StoredRun[] {
    const waiting = this.idleRun();
    const lines = this.host.sql
      .exec<RunRow>('SELECT * FROM runs ORDER BY seq DESC LIMIT ?', waiting ? limit - 1 : limit)
      .toArray()
      .map(runOf);
    return waiting && limit > 0 ? [waiting, ...lines] : lines;
  }

  counters(): Counters {
    const row = this.host.row();
    return {
      runs: row.runs,
      successes: row.successes,
      failures: row.failed_runs,
      continued: row.continued_runs,
      skipped: row.skipped,
      recoveries: row.recoveries,
      records_delivered: row.records_delivered,
      dead_letters_pruned: row.dead_letters_pruned,
    };
  }

  /** The run with this id: in the ring, or the idle run waiting (folded ones too); else null. */
  run(id: number): StoredRun | null {
    const waiting = this.idleRun();
    if (waiting && id <= waiting.id && id >= (waiting.folded?.firstId ?? waiting.id))
      return waiting;
    const row = this.host.sql
      .exec<RunRow>('SELECT * FROM runs WHERE ? BETWEEN COALESCE(first_seq, seq) AND seq', id)
      .toArray()[0];
    return row === undefined ? null : runOf(row);
  }

  /** History only: a trigger that found the lease held, or a run fenced off. */
  record(run: RunRecord): void {
    this.host.transaction(() => {
      const waiting = this.flushIdle();
      this.insert(run);
      if (run.outcome === 'skipped' || waiting)
        this.host.updateState(
          'skipped = skipped + ?, idle_run = NULL',
          'WHERE id = 1',
          run.outcome === 'skipped' ? 1 : 0,
        );
    });
  }

  /** A dead run's lease taken over: its line, and the recoveries counter. */
  recordRecovery(run: RunRecord): void {
    this.host.transaction(() => {
      this.flushIdle();
      this.insert(run);
      this.host.updateState('recoveries = recoveries + 1, idle_run = NULL', 'WHERE id = 1');
    });
  }

  /**
   * A run's end, inside its transaction: a run that did something goes into the ring (after
   * the idle one waiting, if any); an idle one waits in the state row. Returns the bindings of
   * FINISH_SET, for the run's one write of the state row.
   */
  finish(run: RunRecord): unknown[] {
    const idle = isIdle(run);
    if (!idle) {
      this.flushIdle();
      this.insert(run);
    }
    return [
      run.outcome === 'success' ? 1 : 0,
      run.outcome === 'failed' ? 1 : 0,
      run.outcome === 'continued' ? 1 : 0,
      run.records,
      idle ? JSON.stringify(this.folded(run)) : null,
    ];
  }

  /** An idle run's line as it waits in the state row (`idle_run`), folded with the one there. */
  idleLine(run: RunRecord): string {
    return JSON.stringify(this.folded(run));
  }

  /**
   * An idle run as it waits in the state row: the next id, folded with the idle run waiting
   * before it (if any), so that every id stays findable without a row of its own.
   */
  private folded(run: RunRecord): StoredRun {
    const waiting = this.idleRun();
    if (waiting === null) return { ...run, id: this.lastId() + 1 };
    const firstId = waiting.folded?.firstId ?? waiting.id;
    const firstStartedAt = waiting.folded?.firstStartedAt ?? waiting.startedAt;
    return { ...run, id: waiting.id + 1, folded: { firstId, firstStartedAt } };
  }

  /** The newest id in the ring (0 before the first). */
  private lastId(): number {
    return (
      this.host.sql.exec<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM runs').one().seq ?? 0
    );
  }

  /** The ring's rows and approximate bytes, measured: a bounded read of HISTORY_LIMIT rows. */
  size(): { rows: number; bytes: number } {
    return this.host.sql
      .exec<{ rows: number; bytes: number }>(
        `SELECT COUNT(*) AS rows,
           COALESCE(SUM(octet_length(trigger) + octet_length(outcome) + COALESCE(octet_length(error), 0) + 72), 0) AS bytes
         FROM runs`,
      )
      .one();
  }

  /** The idle run waiting in the state row goes into the ring; returns it (null when none). */
  private flushIdle(): StoredRun | null {
    const waiting = this.idleRun();
    if (waiting) this.insert(waiting);
    return waiting;
  }

  /** The last run when it was idle: kept in the state row, not yet a line of the ring. */
  private idleRun(): StoredRun | null {
    const text = this.host.row().idle_run;
    return text === null ? null : idleRunOf(text);
  }

  /**
   * A line of history, in the ring's slot for its id (over the oldest line once the ring is
   * full): one row written, with no sequence row and no prune. A run with no id yet takes the
   * next; the idle run waiting keeps the id (and fold) it was given.
   */
  private insert(run: RunRecord | StoredRun): void {
    const id = 'id' in run ? run.id : null;
    const firstId = 'folded' in run ? (run.folded?.firstId ?? null) : null;
    this.host.write(
      `INSERT INTO runs (slot, seq, first_seq, epoch, trigger, outcome, started_at, finished_at, windows, pages, records, dead_lettered, child_requests, error, checkpoint)
       SELECT next % ${HISTORY_LIMIT}, next, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
       FROM (SELECT COALESCE(?, MAX(seq) + 1, 1) AS next FROM runs) WHERE true
       ON CONFLICT (slot) DO UPDATE SET seq = excluded.seq, first_seq = excluded.first_seq, epoch = excluded.epoch,
         trigger = excluded.trigger, outcome = excluded.outcome, started_at = excluded.started_at,
         finished_at = excluded.finished_at, windows = excluded.windows, pages = excluded.pages,
         records = excluded.records, dead_lettered = excluded.dead_lettered,
         child_requests = excluded.child_requests, error = excluded.error,
         checkpoint = excluded.checkpoint`,
      firstId,
      run.epoch,
      run.trigger,
      run.outcome,
      run.startedAt,
      run.finishedAt,
      run.windows,
      run.pages,
      run.records,
      run.deadLettered,
      run.childRequests ?? null,
      run.error,
      run.checkpoint,
      id,
    );
  }
}

/** A run that found nothing to do: its line waits in the state row (see History). */
export function isIdle(run: RunRecord): boolean {
  return (
    run.outcome === 'success' && run.records === 0 && run.deadLettered === 0 && run.error === null
  );
}

function runOf(row: RunRow): StoredRun {
  return {
    id: row.seq,
    ...(row.first_seq === null
      ? {}
      : { folded: { firstId: row.first_seq, firstStartedAt: row.started_at } }),
    epoch: row.epoch,
    trigger: known(TRIGGER_KINDS, row.trigger, 'runs.trigger'),
    outcome: known(RUN_OUTCOMES, row.outcome, 'runs.outcome'),
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    windows: row.windows,
    pages: row.pages,
    records: row.records,
    deadLettered: row.dead_lettered,
    ...(row.child_requests === null ? {} : { childRequests: row.child_requests }),
    error: row.error,
    checkpoint: row.checkpoint,
  };
}

/** The idle run as FINISH_SET stored it: a RunRecord's JSON, checked field by field. */
function idleRunOf(text: string): StoredRun {
  const column = 'poller_state.idle_run';
  const run = jsonObject(text, column);
  const folded = run.folded === undefined ? undefined : jsonFields(run.folded, column);
  return {
    id: numberAt(run.id, column),
    ...(folded === undefined
      ? {}
      : {
          folded: {
            firstId: numberAt(folded.firstId, column),
            firstStartedAt: numberAt(folded.firstStartedAt, column),
          },
        }),
    epoch: numberAt(run.epoch, column),
    trigger: known(TRIGGER_KINDS, run.trigger, column),
    outcome: known(RUN_OUTCOMES, run.outcome, column),
    startedAt: numberAt(run.startedAt, column),
    finishedAt: numberAt(run.finishedAt, column),
    windows: numberAt(run.windows, column),
    pages: numberAt(run.pages, column),
    records: numberAt(run.records, column),
    deadLettered: numberAt(run.deadLettered, column),
    error: stringOrNull(run.error, column),
    checkpoint: numberOrNull(run.checkpoint, column),
  };
}
