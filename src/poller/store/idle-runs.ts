// The idle runs' writes that wait in memory (StoreHost.defer): owns no table. A run's lease
// until its first write or delivery, an idle run's end, and when they are written.
import type { Lease } from '../../engine/lease.ts';
import type { RunAftermath, RunRecord, WindowCommit } from '../../engine/ports.ts';
import type { DeliveryFailures } from './delivery-failures.ts';
import { type History, isIdle } from './history.ts';
import type { StoreHost } from './host.ts';

/**
 * An idle poller's state row is written at least this often. Between, a run that finds
 * nothing writes no row (its alarm is its one write): its lease, its end, the checkpoint it
 * moved and the counters wait in memory (StoreHost.defer), shown by read() as if written, and
 * are written with the next write of any kind, or by writeIfDue once the row on disk is this
 * old. A crash or an eviction loses them, at no risk: the lease guarded nothing written or
 * sent; the checkpoint goes back at most this long, so the next window is that much longer
 * (R1: never a gap); the idle runs since the last write are not in the counters or the
 * history. 20 minutes: 2,160 rows a month, against 43,200 at a row a run; with the registry's
 * heartbeat (REPORT_EVERY_MS, an hour: its memo rides on this row), an idle poller ticking
 * every minute costs under $0.06 a month (docs/guarantees.md, "Cost model").
 */
export const IDLE_WRITE_EVERY_MS = 20 * 60_000;

/**
 * Grants a lease started in this same turn (compare-and-set on the epoch, as shown) in memory
 * only: it is written with the run's first write, or by persistLease before its first
 * delivery; an idle run's never is.
 */
export function acquireInMemory(
  host: StoreHost,
  expectedEpoch: number,
  lease: Lease & { startedAt: number },
  nextTickAt: number | null | undefined,
): boolean {
  if (host.row().epoch !== expectedEpoch) return false;
  host.defer(
    {
      epoch: lease.epoch,
      lease_trigger: lease.trigger,
      lease_held: 1,
      lease_phase: lease.phase,
      lease_started_at: lease.startedAt,
      lease_expires_at: lease.expiresAt,
      wakeup_at: null,
      wakeup_reason: null,
      wakeup_failure: null,
      ...(nextTickAt === undefined ? {} : { next_tick_at: nextTickAt }),
    },
    lease.startedAt,
  );
  return true;
}

/** Whether the lease of `epoch` is held in memory only (nothing was written under it yet). */
export function leaseInMemory(host: StoreHost, epoch: number): boolean {
  const set = host.deferredSet();
  return set !== null && set.lease_held === 1 && set.epoch === epoch;
}

/**
 * Ends an idle run in memory, when it may: its lease was never written, it found nothing
 * and nothing fails. Its end waits in the state row's deferred write, as finishRun would
 * have written it but for the ledger, which an empty window leaves as it was (its prune
 * comes with the next commit written). Written with the next write, or by writeIfDue.
 */
export function finishInMemory(
  host: StoreHost,
  tables: { history: History; failures: DeliveryFailures },
  epoch: number,
  run: RunRecord,
  next: RunAftermath,
  commit: WindowCommit | undefined,
): boolean {
  if (
    commit === undefined ||
    commit.remember.length > 0 ||
    !isIdle(run) ||
    next.failures !== 0 ||
    next.wakeup !== null ||
    next.stall !== null ||
    next.rateLimitedUntil !== null ||
    !leaseInMemory(host, epoch) ||
    tables.failures.any()
  ) {
    return false;
  }
  const row = host.row();
  host.defer(
    {
      lease_held: 0,
      failures: 0,
      wakeup_at: null,
      wakeup_reason: null,
      wakeup_failure: null,
      upstream_skew_ms: next.skewMs === null ? row.upstream_skew_ms : Math.round(next.skewMs),
      stall_from: null,
      stall_pages: null,
      straggle_ms: Math.max(row.straggle_ms, next.straggleMs),
      idle_run: tables.history.idleLine(run),
      checkpoint: commit.checkpoint,
      scope_from: row.scope_from ?? row.checkpoint ?? commit.checkpoint,
    },
    run.finishedAt,
    { runs: 1, successes: 1 },
  );
  return true;
}

/**
 * Writes what waits in memory once the state row on disk is IDLE_WRITE_EVERY_MS behind (its
 * `written_at`): called at the end of an invocation, after the registry report, so the
 * report's memo goes in the same row. On disk, not in memory: an object evicted after every
 * run (a poller that ticks every few minutes) still writes its state that often.
 */
export function writeIfDue(host: StoreHost, now: number): void {
  if (host.deferredSince() === null) return;
  const writtenAt = host.row().written_at ?? Number.NEGATIVE_INFINITY;
  if (now - writtenAt >= IDLE_WRITE_EVERY_MS) host.flush();
}
