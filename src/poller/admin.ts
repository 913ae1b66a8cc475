import type { Json } from '../engine/ports.ts';
import type { SqliteStore } from './store/index.ts';

export type CheckpointResult =
  | { outcome: 'moved'; from: string | null; to: string; backfill: boolean }
  | { outcome: 'refused'; status: 400 | 409; error: string };

/** Writes an admin action to the audit log and to the logs (one JSON line, no secrets). */
export function audit(
  store: SqliteStore,
  poller: string,
  action: string,
  detail: Json,
  now: number,
): void {
  store.audit.append({ at: now, action, detail });
  console.log(JSON.stringify({ event: 'admin', poller, action, detail }));
}

/** The earliest checkpoint an admin may set: upstream times before the Unix epoch are typos. */
export const EARLIEST_CHECKPOINT = 0;

/**
 * PUT checkpoint: a time between 1970-01-01 and now (anything else is a typo, and every
 * stored time must render as a date); refused while a lease is held (the run would
 * overwrite it); backward is a backfill (everything from there is delivered again); forward
 * can skip updates, so it needs `force`. Pending delivery failures are kept either way.
 */
export function moveCheckpoint(
  store: SqliteStore,
  poller: string,
  request: { at: number; reason: string; force: boolean },
  now: number,
): CheckpointResult {
  const outOfBounds = checkpointBounds(request.at, now);
  if (outOfBounds !== null) return { outcome: 'refused', status: 400, error: outOfBounds };
  const state = store.read();
  if (state.lease.held && (state.lease.expiresAt ?? 0) > now) {
    const holder =
      state.lease.trigger === 'replay' ? 'a dead-letter replay' : `run ${state.lease.epoch}`;
    return {
      outcome: 'refused',
      status: 409,
      error: `${holder} holds the lease until ${new Date(state.lease.expiresAt ?? now).toISOString()}; try again when it has finished`,
    };
  }
  const from = state.checkpoint;
  const forward = from !== null && request.at > from;
  if (forward && !request.force) {
    return {
      outcome: 'refused',
      status: 400,
      error:
        'moving the checkpoint forward skips every update in between: send "force": true if that is what you want',
    };
  }
  if (state.lease.held || !store.moveCheckpoint(request.at)) {
    return {
      outcome: 'refused',
      status: 409,
      error: 'a lease is held (an expired run awaits recovery); trigger a run first',
    };
  }
  const result = {
    outcome: 'moved' as const,
    from: from === null ? null : new Date(from).toISOString(),
    to: new Date(request.at).toISOString(),
    backfill: !forward,
  };
  audit(
    store,
    poller,
    'checkpoint.moved',
    { from: result.from, to: result.to, reason: request.reason, force: request.force },
    now,
  );
  return result;
}

/** Why `at` cannot be a checkpoint, or null when it can. */
function checkpointBounds(at: number, now: number): string | null {
  if (!Number.isFinite(at)) return 'the checkpoint must be a valid time';
  if (at < EARLIEST_CHECKPOINT) {
    const earliest = new Date(EARLIEST_CHECKPOINT).toISOString();
    return `the checkpoint cannot be before ${earliest} (the Unix epoch): check the year`;
  }
  if (at > now) return 'the checkpoint cannot be in the future';
  return null;
}
