// Owns the resume_round table (source.resume): the round's token and its page cursor.
import type { RoundCommit, RoundState, RoundStore } from '../../engine/ports.ts';
import type { AuditLog } from './audit-log.ts';
import type { StoreHost } from './host.ts';

/** One row of resume_round, as SQLite returns it. */
type RoundRow = {
  token: string | null;
  token_at: number | null;
  cursor: string | null;
  pages: number;
  resync_at: number | null;
  resync_reason: string | null;
};

const NONE: RoundState = { token: null, tokenAt: null, cursor: null, pages: 0, resync: null };

/**
 * Owns `resume_round` (migration 23, one row): the token the next round starts from, when it
 * was stored, and the page cursor of the round in progress (R20). The token is written only by
 * the port's commit, in its transaction (`commit`); the cursor as each page is handled.
 */
export class ResumeRound implements RoundStore {
  constructor(
    private readonly host: StoreHost,
    private readonly fenced: (epoch: number, write: () => unknown) => boolean,
    private readonly audit: AuditLog,
  ) {}

  read(): RoundState {
    const row = this.host.sql
      .exec<RoundRow>(
        'SELECT token, token_at, cursor, pages, resync_at, resync_reason FROM resume_round WHERE id = 1',
      )
      .toArray()[0];
    if (row === undefined) return NONE;
    const resync =
      row.resync_at === null ? null : { at: row.resync_at, reason: row.resync_reason ?? '' };
    const { token, cursor, pages } = row;
    return { token, tokenAt: row.token_at, cursor, pages, resync };
  }

  expire(epoch: number, at: number, reason: string): boolean {
    return this.fenced(epoch, () => {
      this.host.write(
        `INSERT INTO resume_round (id, resync_at, resync_reason) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET token = NULL, token_at = NULL, cursor = NULL, pages = 0,
           resync_at = excluded.resync_at, resync_reason = excluded.resync_reason`,
        at,
        reason,
      );
      this.audit.append({ at, action: 'resume_resync', detail: { reason } });
    });
  }

  /**
   * An admin's resync (PUT /pollers/:name/checkpoint with resync): the token and the page
   * cursor are cleared, so the next round starts from source.url. Only while no lease is held
   * (a run would store its token over it): false then, and nothing is written.
   */
  resync(at: number, reason: string): boolean {
    return (
      this.host.write(
        `INSERT INTO resume_round (id, resync_at, resync_reason)
           SELECT 1, ?, ? WHERE (SELECT lease_held FROM poller_state WHERE id = 1) IS NOT 1
         ON CONFLICT (id) DO UPDATE SET token = NULL, token_at = NULL, cursor = NULL, pages = 0,
           resync_at = excluded.resync_at, resync_reason = excluded.resync_reason`,
        at,
        reason,
      ) > 0
    );
  }

  keepCursor(epoch: number, cursor: string, pages: number): boolean {
    return this.fenced(epoch, () =>
      this.host.write(
        `INSERT INTO resume_round (id, cursor, pages) VALUES (1, ?, ?)
         ON CONFLICT (id) DO UPDATE SET cursor = excluded.cursor, pages = excluded.pages`,
        cursor,
        pages,
      ),
    );
  }

  /** Stores a round's token, its cursor done: inside the commit's transaction (the port's). */
  commit(round: RoundCommit): void {
    this.host.write(
      `INSERT INTO resume_round (id, token, token_at, cursor, pages) VALUES (1, ?, ?, NULL, 0)
       ON CONFLICT (id) DO UPDATE SET token = excluded.token, token_at = excluded.token_at,
         cursor = NULL, pages = 0`,
      round.token,
      round.at,
    );
  }
}
