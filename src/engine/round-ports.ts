// source.resume: the ports of a round's token and page cursor (engine/rounds.ts uses them).

/** The end of a resume round: its token, and when it was handed out (our clock). */
export interface RoundCommit {
  token: string;
  at: number;
}

/** source.resume: where the rounds stand. */
export interface RoundState {
  /** The token the next round starts from; null: from source.url (the first round, a resync). */
  token: string | null;
  /** When the token was stored (our clock). */
  tokenAt: number | null;
  /** The next page of the round in progress, kept as each page is handled; null: its first. */
  cursor: string | null;
  /** Pages of the round in progress handled so far. */
  pages: number;
  /** The last resync: when a token expired, and what the upstream said (null: none yet). */
  resync: { at: number; reason: string } | null;
}

/** source.resume: the round's token and its page cursor (one owner, fenced like C, R6). */
export interface RoundStore {
  read(): RoundState;
  /** Keeps the next page of the round in progress once a page was handled (R20). */
  keepCursor(epoch: number, cursor: string, pages: number): boolean;
  /**
   * The token expired: clears it and the page cursor (the next round starts from source.url),
   * notes the resync and writes an audit entry, in one fenced write.
   */
  expire(epoch: number, at: number, reason: string): boolean;
}
