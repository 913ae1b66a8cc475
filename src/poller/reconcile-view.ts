import { formatDuration } from '../config/duration.ts';
import { isoTime, isoTimeOrNull } from '../engine/iso-time.ts';
import type { ReconcileState } from '../engine/ports.ts';

/** What status shows of a poller's reconciliation (reconcile): null for a poller without one. */
export interface ReconcileView {
  /** How often a listing starts; null: the listings are source.resume's full rounds (resync_deletes). */
  every: string | null;
  /** When the next listing starts (null until the first run books it). */
  next_listing_at: string | null;
  /** An admin asked for a listing (POST /pollers/:name/reconcile) that has not started yet. */
  requested: boolean;
  /** The listing going on: when it began, the pages and ids so far. */
  listing: { started_at: string; pages: number; ids: number; unreadable: number } | null;
  /** Deletes held: more than max_deletes, awaiting a confirm or a second listing that agrees. */
  held: {
    deletes: number;
    known_ids: number;
    since: string;
    reason: string;
    /** Found by an empty listing: only a confirm releases them, never a later listing. */
    confirm_only: boolean;
  } | null;
  /** Found by a completed listing and not delivered yet (held and unconfirmed ones not included). */
  pending: number;
  /** Deletes a completed listing found that wait for the next listing to confirm them. */
  unconfirmed: number;
  /** The last listing that completed. */
  last_listing: {
    started_at: string;
    finished_at: string;
    ids: number;
    deletes: number;
    upserts: number;
    outcome: 'delivered' | 'held' | 'agreed' | 'unconfirmed';
    /**
     * The deletes it sends out are of ids gone before this: its start with reconcile.fetch,
     * the start of the listing before it without (both lacked them); null when none.
     */
    deletes_before: string | null;
  } | null;
  /** The last error of a listing page or a delivery, and when it is tried again. */
  error: { at: string; message: string; retry_at: string | null } | null;
}

export interface ReconcileInput {
  every: number | null;
  state: ReconcileState;
  requestedAt: number | null;
  pending: number;
  unconfirmed: number;
}

export function reconcileView(input: ReconcileInput): ReconcileView {
  const { state } = input;
  return {
    every: input.every === null ? null : formatDuration(input.every),
    next_listing_at: isoTimeOrNull(state.dueAt),
    requested: input.requestedAt !== null,
    listing:
      state.listing === null
        ? null
        : {
            started_at: isoTime(state.listing.startedAt),
            pages: state.listing.pages,
            ids: state.listing.ids,
            unreadable: state.listing.unreadable,
          },
    held:
      state.held === null
        ? null
        : {
            deletes: state.held.deletes,
            known_ids: state.held.known,
            since: isoTime(state.held.since),
            reason: state.held.reason,
            confirm_only: state.held.empty === true,
          },
    pending: input.pending,
    unconfirmed: input.unconfirmed,
    last_listing:
      state.last === null
        ? null
        : {
            started_at: isoTime(state.last.startedAt),
            finished_at: isoTime(state.last.finishedAt),
            ids: state.last.ids,
            deletes: state.last.deletes,
            upserts: state.last.upserts,
            outcome: state.last.outcome,
            deletes_before: isoTimeOrNull(state.last.deletesBefore ?? null),
          },
    error:
      state.error === null
        ? null
        : {
            at: isoTime(state.error.at),
            message: state.error.message,
            retry_at: isoTimeOrNull(state.retryAt),
          },
  };
}

/** The alert of held deletes: /healthz reports the poller until someone looks. */
export function heldAlert(name: string, state: ReconcileState | null | undefined): string | null {
  const held = state?.held;
  if (!held) return null;
  const or = held.empty ? '' : ', or a later listing that finds them again delivers them';
  return `reconcile held ${held.deletes} deletes (${held.reason}): confirm with POST /pollers/${name}/reconcile/confirm${or}`;
}

/** The warning of a reconciliation that fails (its listing or its deliveries). */
export function reconcileWarning(state: ReconcileState | null | undefined): string | null {
  if (!state?.error) return null;
  return `reconcile: ${state.error.message} (${state.failures} failure${state.failures === 1 ? '' : 's'} in a row)`;
}
