import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { onTestFinished } from 'vitest';
import { STATIC_INCARNATION } from '../../src/catalog.ts';
import type { Poller } from '../../src/poller/durable-object.ts';
import type { StoreHost } from '../../src/poller/store/host.ts';
import { SqliteStore } from '../../src/poller/store/index.ts';
import { BOUNDARY_POLLERS } from '../support/boundary-pollers.ts';
import { TEST_POLLERS } from '../support/pollers.ts';

const DUE_SLACK_MS = 100;
/** How long a poller must stay with no run and no due alarm before `settle()` calls it at rest. */
const REST_MS = 50;
/** How long a poller whose last run continued must rest before settle() calls it at rest. */
const CONTINUATION_REST_MS = 1_000;

/**
 * A test changed the object's storage with SQL of its own, as no code in production does:
 * the object's store keeps the state row it last read until it writes, so it is told.
 */
export function writtenBehindTheStore(instance: Poller): void {
  storeOf(instance).forget();
}

/** The SQL host under a store: what waits in memory to be written (StoreHost.defer). */
/**
 * Disarms every static test poller's own ticks, which the watchdog arms: so that no tick of
 * these shared objects fires later, in another test.
 */
export async function disarmStaticPollers(): Promise<void> {
  for (const name of Object.keys({ ...TEST_POLLERS, ...BOUNDARY_POLLERS })) {
    const object = env.POLLER.get(env.POLLER.idFromName(name));
    await runInDurableObject(object, async (instance: Poller, state) => {
      await state.storage.deleteAlarm();
      state.storage.sql.exec('UPDATE poller_state SET next_tick_at = NULL');
      writtenBehindTheStore(instance);
    });
  }
}

export function hostOf(store: SqliteStore): StoreHost {
  return (store as unknown as { host: StoreHost }).host;
}

/** The object's store, as the object holds it (its state row as the object sees it). */
export function storeOf(instance: Poller): SqliteStore {
  return (instance as unknown as { store: SqliteStore }).store;
}
const pause = () => new Promise((resolve) => setTimeout(resolve, 1));

/**
 * A stub whose calls wait until `named` settles: the object is given its name before any
 * call of the test reaches it, whatever order workerd would deliver them in.
 */
function whenNamed<T extends object>(stub: T, named: Promise<unknown>): T {
  return new Proxy(stub, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function' || key === 'constructor') return value;
      return (...args: unknown[]) => named.then(() => Reflect.apply(value, target, args));
    },
  });
}

/**
 * A fresh Poller Durable Object for one test, running the named config from TEST_POLLERS.
 * Its alarm fires by itself in workerd as it would in production; `settle()` also runs any
 * alarm that is due and waits for a run in progress, so a test sees where the poller rests.
 *
 * An object knows its poller's name from its id (`idFromName`). A test's own object has a
 * unique id, which has none: the name is stored in it first, as the object keeps it for such
 * an id. With `objectName` (the config's name), the test gets the object the Worker's routes
 * reach by that name instead, shared with every test that asks for it.
 */
export function newPoller(config: string, objectName?: string) {
  if (objectName !== undefined && objectName !== config) {
    throw new Error(
      `the object named "${objectName}" runs the poller "${objectName}", not "${config}"`,
    );
  }
  const id = objectName === undefined ? env.POLLER.newUniqueId() : env.POLLER.idFromName(config);
  const named =
    objectName === undefined
      ? runInDurableObject(env.POLLER.get(id), (_instance: Poller, state) => {
          new SqliteStore(state.storage).meta.rememberName(config);
        })
      : Promise.resolve();
  named.catch(() => {}); // a failure surfaces in the calls that wait for it
  // A fresh stub per call: after the object is aborted, an old stub stays broken.
  const fresh = () => whenNamed(env.POLLER.get(id), named);
  // A test's own object is paused once its test is over. A retry it booked (2.5 to 5 s after
  // a failed run) would otherwise wake it in a later test of the file: every test's fakes
  // answer the same hosts, so it would poll that test's upstream and deliver to its receiver
  // (a record stamped in 2999, say, delivered "twice"). Paused, no run of any kind starts.
  // An object shared by name is left as it is: later tests use it.
  if (objectName === undefined) {
    onTestFinished(async () => {
      await fresh()
        .setPaused(STATIC_INCARNATION, true, 'the test that made it is over')
        .catch(() => {}); // a test may have left it erased or aborted: nothing to wake then
    });
  }
  // What an idle run keeps in memory (StoreHost.defer) is written first: the test's SQL sees
  // the storage as the object's next write would leave it.
  const sql = <T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]) =>
    runInDurableObject(fresh(), (instance: Poller, state) => {
      storeOf(instance).flush();
      const rows = state.storage.sql.exec<T>(query, ...bindings).toArray();
      writtenBehindTheStore(instance);
      return rows;
    });
  const alarmAt = () =>
    runInDurableObject(fresh(), (_instance: Poller, state) => state.storage.getAlarm());
  // As the object sees it (a lease held in memory included), writing nothing.
  const leaseRow = () =>
    runInDurableObject(fresh(), (instance: Poller) => storeOf(instance).read().lease);

  const poller = {
    stub: fresh,
    trigger: (kind: 'cron' | 'manual' = 'cron') => fresh().trigger(kind),
    status: () => fresh().status(),
    runs: () => fresh().runs(100),
    /** Runs the alarm now, as the platform would at its time. */
    alarm: () => runDurableObjectAlarm(fresh()),
    sql,
    alarmAt,
    /** Runs due alarms and waits out runs in progress until the poller rests (or `limit`). */
    async settle(limit = 2_000) {
      let quietSince: number | null = null;
      for (let step = 0; step < limit; step += 1) {
        const lease = await leaseRow();
        const live = lease.held && (lease.expiresAt ?? 0) > Date.now();
        const at = await alarmAt();
        // The test's clock and the object's can differ by a few ms: "due" allows for that.
        const due = at !== null && at <= Date.now() + DUE_SLACK_MS;
        if (live && lease.phase === 'running') await pause();
        else if (live || due) await runDurableObjectAlarm(fresh());
        else {
          // An alarm the platform fired itself (a continuation booked for now) is neither
          // pending nor holding the lease for a moment: only a rest that lasts counts. Three
          // checks in a row were a few ms, and with two suites at once a continuation's start
          // took longer, so a test saw "continued" as the poller's last run.
          quietSince ??= Date.now();
          if (Date.now() - quietSince >= REST_MS) {
            // A run that continued has booked its continuation: under load the platform can
            // take that alarm (no longer pending) well before the run takes the lease, so a
            // poller whose last run continued is given CONTINUATION_REST_MS to show it.
            const last = (await fresh().runs(1))[0];
            const rest = last?.outcome === 'continued' ? CONTINUATION_REST_MS : REST_MS;
            if (Date.now() - quietSince >= rest) return;
          }
          await pause();
          continue;
        }
        quietSince = null;
      }
      throw new Error('the poller did not come to rest');
    },
    /** A cron tick and everything it sets going (the run, continuations, due retries). */
    async tick() {
      const reply = await fresh().trigger('cron');
      await poller.settle();
      return reply;
    },
    /**
     * Makes the poller's own tick due now, as if its time had come: in what the object keeps
     * in memory, writing nothing (a test's SQL would write what waits there first).
     */
    dueNow: () =>
      runInDurableObject(fresh(), (instance: Poller) => {
        hostOf(storeOf(instance)).defer({ next_tick_at: Date.now() }, Date.now());
      }),
    /**
     * The poller's own tick comes due and its alarm fires: what a cron poller does every
     * minute, with nothing written by the test (what waits in memory stays there).
     */
    async ownTick() {
      await poller.dueNow();
      await poller.alarm();
      await poller.settle();
    },
    /** The state row as stored, without writing what waits in memory first. */
    storedRow: () =>
      runInDurableObject(fresh(), (_instance: Poller, state) =>
        state.storage.sql
          .exec<{ checkpoint: number | null; runs: number; lease_held: number; epoch: number }>(
            'SELECT checkpoint, runs, lease_held, epoch FROM poller_state',
          )
          .one(),
      ),
    /** Sets the stored checkpoint, as if the last successful run had started then. */
    setCheckpoint: (at: number) => sql('UPDATE poller_state SET checkpoint = ?', at),
    checkpoint: async () =>
      (await sql<{ checkpoint: number | null }>('SELECT checkpoint FROM poller_state'))[0]
        ?.checkpoint ?? null,
    /** Moves the lease expiry into the past, as if its TTL had run out. */
    expireLease: () => sql('UPDATE poller_state SET lease_expires_at = ?', Date.now() - 1),
    /** Moves a booked retry to now, as if its backoff had passed, and lets it run. */
    async retryNow() {
      await sql('UPDATE poller_state SET wakeup_at = ? WHERE wakeup_at IS NOT NULL', Date.now());
      await runInDurableObject(fresh(), (_instance: Poller, state) =>
        state.storage.setAlarm(Date.now()),
      );
      await poller.settle();
    },
    /** Kills the object mid-whatever, as a deploy or a crash would; storage survives. */
    abort: () =>
      runInDurableObject(fresh(), (_instance: Poller, state) =>
        state.abort('test: simulated crash'),
      ).catch((error: unknown) => error),
  };
  return poller;
}
