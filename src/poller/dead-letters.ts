import { deliveryOp, isDeletionKey } from '../engine/idempotency.ts';
import type { DeadLetter, Json, RunContext } from '../engine/ports.ts';
import { parseTimestamp } from '../sources/time.ts';
import { MAX_RECORD_DEPTH, readRecord, textDepth, tooDeep } from './record-text.ts';
import type { QueuedDeadLetter } from './rpc.ts';
import type { SqliteStore, StoredDeadLetter } from './store/index.ts';

/** A page of dead letters stops once its records add up to this (one letter at least). */
export const DEAD_LETTER_PAGE_BYTES = 4 * 1024 * 1024;

/** A dead letter as the admin API shows it. */
export interface DeadLetterView {
  key: string;
  kind: 'delivery' | 'unreadable';
  id: string | null;
  version: string | null;
  /** The record; null when it is kept as text (then see `record_text`). */
  record: Json;
  /** A record nested too deep or too big to show as JSON: its JSON text, as stored. */
  record_text?: string;
  /** Why the record is shown as `record_text`. */
  record_note?: string;
  error: string;
  attempts: number;
  first_failure: string;
  last_failure: string;
}

export type ReplayResult =
  | { outcome: 'delivered'; key: string }
  | { outcome: 'failed'; key: string; error: string }
  | { outcome: 'not_found'; key: string }
  | { outcome: 'unreadable'; key: string; error: string }
  | { outcome: 'too_deep'; key: string; error: string }
  | { outcome: 'busy'; key: string; error: string };

export function viewOf(letter: StoredDeadLetter): DeadLetterView {
  const read = readRecord(letter.recordText, letter.recordBytes);
  return {
    key: letter.key,
    kind: letter.kind,
    id: letter.id,
    version: letter.version,
    ...(read.ok
      ? { record: read.record }
      : { record: null, record_text: read.text, record_note: read.note }),
    error: letter.error,
    attempts: letter.attempts,
    first_failure: new Date(letter.firstFailure).toISOString(),
    last_failure: new Date(letter.lastFailure).toISOString(),
  };
}

/**
 * One page of dead letters, oldest first: `limit` of them, fewer when their records pass
 * DEAD_LETTER_PAGE_BYTES; `cursor` continues where the last page ended.
 */
export function listDeadLetters(
  store: SqliteStore,
  limit: number,
  cursor: string | undefined,
): { items: DeadLetterView[]; next_cursor: string | null } {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const { letters, more } = store.deadLetters.page(limit, after, DEAD_LETTER_PAGE_BYTES);
  const last = letters.at(-1);
  return {
    items: letters.map(viewOf),
    next_cursor: more && last ? encodeCursor(last) : null,
  };
}

/** How long past the delivery timeout a replay's lease lasts: signing, storage and slack. */
export const REPLAY_LEASE_MARGIN_MS = 30_000;

/**
 * Delivers one dead letter again, now, through the poller's delivery. Success removes it;
 * either way the attempt is in the audit log. The replay holds the poller's lease while it
 * delivers (R4): a run beside it could deliver a newer version of the record first.
 * `rearm` sets the alarm from storage: at the lease expiry while the replay goes, so a crash
 * mid-replay is recovered like a run's (R5), and back to what comes next after it.
 */
export async function replayDeadLetter(
  store: SqliteStore,
  context: RunContext,
  rearm: () => Promise<void>,
  key: string,
): Promise<ReplayResult> {
  const letter = store.deadLetters.find(key);
  if (!letter) return { outcome: 'not_found', key };
  if (
    letter.kind === 'unreadable' ||
    letter.id === null ||
    letter.version === null ||
    letter.versionMs === null
  ) {
    return {
      outcome: 'unreadable',
      key,
      error:
        'a record the source could not read has no id or version to deliver: fix it upstream, then discard this',
    };
  }
  // A record nested this deep is kept as text, and delivered by nobody: see tooDeep.
  const depth = textDepth(letter.recordText);
  if (depth > MAX_RECORD_DEPTH) return { outcome: 'too_deep', key, error: tooDeep(depth) };
  const update = {
    id: letter.id,
    version: letter.version,
    versionMs: letter.versionMs,
    record: JSON.parse(letter.recordText) as unknown,
    // source.children: a child names its parent on a replay too.
    ...(letter.parent === undefined ? {} : { parent: letter.parent }),
  };
  // Taken before the first await: nothing can start a run between the check and the hold.
  const epoch = holdLease(store, context);
  if (epoch === null) {
    return {
      outcome: 'busy',
      key,
      error: 'a run or another replay holds the lease; try again when it has finished',
    };
  }
  try {
    await rearm();
    const result = await context.deliverer.deliver([
      {
        update,
        // A delete of the deletions stream or a reconciliation says so in its key; a child
        // its parent no longer lists, by its null record (engine/idempotency.ts deliveryOp).
        op: isDeletionKey(key) || deliveryOp(context, update) === 'delete' ? 'delete' : 'upsert',
        idempotencyKey: key,
        attempt: letter.attempts + 1,
      },
    ]);
    const at = context.now();
    if (result.kind === 'delivered') {
      store.deadLetters.remove(key, { at, action: 'dead_letter.replayed', detail: { key } });
      return { outcome: 'delivered', key };
    }
    store.deadLetters.recordReplayFailure(key, result.error, at);
    store.audit.append({
      at,
      action: 'dead_letter.replay_failed',
      detail: { key, error: result.error },
    });
    return { outcome: 'failed', key, error: result.error };
  } finally {
    store.releaseAside(epoch);
    await rearm();
  }
}

/** The lease for one replay: one delivery's timeout and a margin. Null when a lease is held. */
function holdLease(store: SqliteStore, context: RunContext): number | null {
  const { lease } = store.read();
  if (lease.held) return null; // a live run, another replay, or a dead run awaiting recovery
  const now = context.now();
  const deliver: { timeout?: number } = context.config.deliver;
  const expiresAt = now + (deliver.timeout ?? 0) + REPLAY_LEASE_MARGIN_MS;
  return store.holdAside('replay', lease.epoch, now, expiresAt);
}

/** Discards a dead letter for good, keeping the reason in the audit log. */
export function discardDeadLetter(
  store: SqliteStore,
  key: string,
  reason: string,
  now: number,
): { outcome: 'discarded' | 'not_found'; key: string } {
  const letter = store.deadLetters.find(key);
  if (!letter) return { outcome: 'not_found', key };
  const detail = { key, reason, id: letter.id, version: letter.version, error: letter.error };
  store.deadLetters.remove(key, { at: now, action: 'dead_letter.discarded', detail });
  return { outcome: 'discarded', key };
}

function encodeCursor(letter: StoredDeadLetter): string {
  return btoa(JSON.stringify([letter.firstFailure, letter.key])).replace(/=+$/, '');
}

function decodeCursor(cursor: string): { firstFailure: number; key: string } | undefined {
  try {
    const [firstFailure, key] = JSON.parse(atob(cursor)) as [unknown, unknown];
    return typeof firstFailure === 'number' && typeof key === 'string'
      ? { firstFailure, key }
      : undefined;
  } catch {
    return undefined;
  }
}

/** A message the queue consumer gave up on (the dead-letter queue), as a dead letter (R8). */
export function queuedDeadLetter(message: QueuedDeadLetter, now: number): DeadLetter {
  return {
    key: message.key,
    kind: 'delivery',
    id: message.id,
    version: message.version,
    versionMs: parseTimestamp(message.version) ?? null,
    record: JSON.parse(message.record) as unknown,
    error: `the queue consumer gave up after ${message.attempts} attempt(s) (dead-letter queue)`,
    attempts: message.attempts,
    firstFailure: message.at,
    lastFailure: now,
    ...(message.parent === undefined ? {} : { parent: message.parent }),
  };
}
