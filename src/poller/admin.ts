import type { PollerConfig } from '../config/schema.ts';
import type { Json } from '../engine/ports.ts';
import type { SqliteStore } from './store/index.ts';

export type CheckpointResult =
  | { outcome: 'moved'; from: string | null; to: string; backfill: boolean }
  | { outcome: 'resync'; token_stored_at: string | null; round_pages: number }
  | { outcome: 'refused'; status: 400 | 409; error: string };

/** What an admin asks of the checkpoint: move it to a time, or (source.resume) a resync. */
export type CheckpointRequest =
  | { at: number; reason: string; force: boolean }
  | { resync: true; reason: string };

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
  const leased = leaseRefusal(store, now);
  if (leased !== null) return leased;
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
  if (state.lease.held || !store.moveCheckpoint(request.at)) return HELD;
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

/** A write refused: a lease is held, by no live run (it awaits its recovery). */
const HELD = {
  outcome: 'refused' as const,
  status: 409 as const,
  error: 'a lease is held (an expired run awaits recovery); trigger a run first',
};

/** Why an admin's write must wait for the run (or replay) that holds the lease, or null. */
function leaseRefusal(store: SqliteStore, now: number): CheckpointResult | null {
  const { lease } = store.read();
  if (!lease.held || (lease.expiresAt ?? 0) <= now) return null;
  const holder = lease.trigger === 'replay' ? 'a dead-letter replay' : `run ${lease.epoch}`;
  return {
    outcome: 'refused',
    status: 409,
    error: `${holder} holds the lease until ${new Date(lease.expiresAt ?? now).toISOString()}; try again when it has finished`,
  };
}

/**
 * A manual resync (source.resume): the token and the round's page cursor are cleared, so the
 * next round starts from source.url, lists everything and sends only what changed. Refused
 * while a lease is held (the run would store its token over it); audited with the reason.
 */
export function resyncRounds(
  store: SqliteStore,
  poller: string,
  reason: string,
  now: number,
): CheckpointResult {
  const leased = leaseRefusal(store, now);
  if (leased !== null) return leased;
  const before = store.rounds.read();
  if (!store.rounds.resync(now, `an admin asked for a resync: ${reason}`)) return HELD;
  const result = {
    outcome: 'resync' as const,
    token_stored_at: before.tokenAt === null ? null : new Date(before.tokenAt).toISOString(),
    round_pages: before.pages,
  };
  audit(store, poller, 'checkpoint.resync', { reason, ...result }, now);
  return result;
}

/**
 * PUT checkpoint, as the poller's config takes it: a time moves C (moveCheckpoint); with
 * source.resume, whose checkpoint is the round's token, a resync clears it (resyncRounds).
 */
export function checkpointAdmin(
  store: SqliteStore,
  poller: string,
  config: PollerConfig | null,
  request: CheckpointRequest,
  now: number,
): CheckpointResult {
  const refused = checkpointKindRefusal(config, request);
  if (refused !== null) return refused;
  if ('resync' in request) return resyncRounds(store, poller, request.reason, now);
  return moveCheckpoint(store, poller, request, now);
}

/**
 * Whether the request fits the poller: a resync only with source.resume, a time only without
 * (a round's checkpoint is its token, not a time). Null when it does.
 */
function checkpointKindRefusal(
  config: PollerConfig | null,
  request: CheckpointRequest,
): CheckpointResult | null {
  if (config === null) {
    return {
      outcome: 'refused',
      status: 409,
      error: 'the poller is misconfigured: fix its config first',
    };
  }
  const rounds = config.source.resume !== undefined;
  if ('resync' in request && !rounds) {
    return {
      outcome: 'refused',
      status: 400,
      error: 'resync is for a poller with source.resume: move this one\'s checkpoint with "at"',
    };
  }
  if (!('resync' in request) && rounds) {
    return {
      outcome: 'refused',
      status: 400,
      error:
        'a poller with source.resume has no time checkpoint (its rounds start from a token): send {"resync": true, "reason": …} to start over from source.url',
    };
  }
  return null;
}
