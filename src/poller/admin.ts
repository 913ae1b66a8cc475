import type { Json } from '../engine/ports.ts';
import type { SqliteStore } from './sqlite-store.ts';

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
  store.appendAudit({ at: now, action, detail });
  console.log(JSON.stringify({ event: 'admin', poller, action, detail }));
}

/**
 * PUT checkpoint: refused while a lease is held (the run would overwrite it); backward is a
 * backfill (everything from there is delivered again); forward can skip updates, so it
 * needs `force`.
 */
export function moveCheckpoint(
  store: SqliteStore,
  poller: string,
  request: { at: number; reason: string; force: boolean },
  now: number,
): CheckpointResult {
  const state = store.read();
  if (state.lease.held && (state.lease.expiresAt ?? 0) > now) {
    return {
      outcome: 'refused',
      status: 409,
      error: `run ${state.lease.epoch} holds the lease until ${new Date(state.lease.expiresAt ?? now).toISOString()}; try again when it has finished`,
    };
  }
  if (request.at > now)
    return { outcome: 'refused', status: 400, error: 'the checkpoint cannot be in the future' };
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
