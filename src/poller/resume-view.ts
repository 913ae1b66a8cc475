import { isoTime, isoTimeOrNull } from '../engine/iso-time.ts';
import type { RoundState } from '../engine/ports.ts';

/** source.resume as status shows it: the token's age and the round's progress, never the token. */
export interface ResumeView {
  /** Whether a token is stored: false before the first round ends, and after a resync. */
  token_stored: boolean;
  /** When the token the next round starts from was stored, and how long ago. */
  token_stored_at: string | null;
  token_age_seconds: number | null;
  /** The round in progress: pages handled so far (0: none; a budget stop continues after them). */
  round_pages: number;
  /** The last resync: when a token expired, and what the upstream answered (its token shortened). */
  last_resync: { at: string; reason: string } | null;
}

/** Shapes a poller's round state for status (null: the poller has no source.resume). */
export function resumeView(state: RoundState | null, now: number): ResumeView | null {
  if (state === null) return null;
  return {
    token_stored: state.token !== null,
    token_stored_at: isoTimeOrNull(state.tokenAt),
    token_age_seconds:
      state.tokenAt === null ? null : Math.max(0, Math.round((now - state.tokenAt) / 1000)),
    round_pages: state.pages,
    last_resync:
      state.resync === null ? null : { at: isoTime(state.resync.at), reason: state.resync.reason },
  };
}
