import type { PollerConfig, SourceConfig } from '../config/schema.ts';
import type { DeadLetter, PollerStore, RunContext, Source, StreamStore } from './ports.ts';

/**
 * `source.deletions`: a stream of deletes polled after the main stream in every run, under
 * the same rules (R1–R10) with its own checkpoint and ledger. It is the main stream's run
 * context with another source, every record a delete (`stream: "deletions"`, which also
 * gives its deliveries their own idempotency keys and failures), and a store whose
 * checkpoint and ledger are the stream's (StreamStore); the lease, the failures and the
 * dead letters are the poller's.
 */
export function deletionsContext(
  main: RunContext,
  source: Source,
  sourceConfig: SourceConfig,
): RunContext | null {
  const stream = main.store.deletionsStream;
  if (stream === undefined) return null;
  // Its deletes go into the per-id memory as the main stream's deliveries do (a restore
  // after one is a change); deliver.changes_only holds back only a delete that a newer
  // version of its id has overtaken (engine/unchanged.ts).
  const config: PollerConfig = { ...main.config, source: sourceConfig };
  const { lateness: _, ...shared } = main;
  return {
    ...shared,
    config,
    source,
    store: streamView(main.store, stream),
    stream: 'deletions',
    isDeleted: null,
    deletions: null,
    reconcile: null,
  };
}

/**
 * The poller's store, with a stream's checkpoint, stall and ledger in place of the main
 * stream's: a window of this stream that stops is measured against this stream's last one,
 * and what the run's end says of it is kept beside this stream's checkpoint.
 */
function streamView(store: PollerStore, stream: StreamStore): PollerStore {
  return {
    read: () => ({
      ...store.read(),
      checkpoint: stream.checkpoint(),
      straggleMs: 0,
      stall: stream.stall(),
    }),
    holds: (epoch) => store.holds(epoch),
    persistLease: (epoch) => store.persistLease(epoch),
    acquire: (expected, lease, nextTickAt) => store.acquire(expected, lease, nextTickAt),
    releaseIdle: (epoch, now) => store.releaseIdle(epoch, now),
    markRunning: (epoch, expiresAt) => store.markRunning(epoch, expiresAt),
    delivered: (from) => stream.delivered(from),
    commitWindow: (epoch, checkpoint, remember, pruneBelow) =>
      stream.commitWindow(epoch, checkpoint, remember, pruneBelow),
    remember: (epoch, entries) => stream.remember(epoch, entries),
    rememberPage: (epoch, entries) => stream.remember(epoch, entries),
    // A run this stream ends: the main stream had caught up before it (its stall is over),
    // and this stream's own stall goes beside its checkpoint.
    finishRun: (epoch, run, next, commit) =>
      stream.keepStall(epoch, next.stall) &&
      store.finishRun(epoch, run, { ...next, stall: null }, commit),
    recordRun: (run) => store.recordRun(run),
    recordRecovery: (run) => store.recordRecovery(run),
    failing: () => store.failing(),
    recordFailure: (epoch, failure) => store.recordFailure(epoch, failure),
    clearFailure: (epoch, key) => store.clearFailure(epoch, key),
    // A dead-lettered delete is handled: this stream's ledger keeps it too, so the window
    // that asks for it again does not deliver it again.
    deadLetter: (epoch, letter: DeadLetter) =>
      store.deadLetter(epoch, letter) &&
      (letter.id === null || letter.version === null || letter.versionMs === null
        ? true
        : stream.remember(epoch, [
            { id: letter.id, version: letter.version, versionMs: letter.versionMs },
          ])),
    ...(store.idsOf ? { idsOf: store.idsOf.bind(store) } : {}),
    ...(store.rememberIds ? { rememberIds: store.rememberIds.bind(store) } : {}),
    setNextTick: (at) => store.setNextTick(at),
  };
}
