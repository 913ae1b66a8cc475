import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import type { Poller } from '../../src/poller/durable-object.ts';
import { SqliteStore } from '../../src/poller/store/index.ts';

const DUE_SLACK_MS = 100;

/**
 * A test changed the object's storage with SQL of its own, as no code in production does:
 * the object's store keeps the state row it last read until it writes, so it is told.
 */
export function writtenBehindTheStore(instance: Poller): void {
  (instance as unknown as { sqlite: { forget(): void } }).sqlite.forget();
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
  const sql = <T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]) =>
    runInDurableObject(fresh(), (instance: Poller, state) => {
      const rows = state.storage.sql.exec<T>(query, ...bindings).toArray();
      writtenBehindTheStore(instance);
      return rows;
    });
  const alarmAt = () =>
    runInDurableObject(fresh(), (_instance: Poller, state) => state.storage.getAlarm());
  const leaseRow = async () =>
    (
      await sql<{ lease_held: number; lease_phase: string; lease_expires_at: number | null }>(
        'SELECT lease_held, lease_phase, lease_expires_at FROM poller_state',
      )
    )[0];

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
      let quiet = 0;
      for (let step = 0; step < limit; step += 1) {
        const lease = await leaseRow();
        const live = lease?.lease_held === 1 && (lease.lease_expires_at ?? 0) > Date.now();
        const at = await alarmAt();
        // The test's clock and the object's can differ by a few ms: "due" allows for that.
        const due = at !== null && at <= Date.now() + DUE_SLACK_MS;
        if (live && lease?.lease_phase === 'running') await pause();
        else if (live || due) await runDurableObjectAlarm(fresh());
        else if (++quiet >= 3) return;
        else {
          // An alarm the platform fired itself is neither pending nor holding the lease for
          // a moment: only a rest that lasts counts.
          await pause();
          continue;
        }
        quiet = 0;
      }
      throw new Error('the poller did not come to rest');
    },
    /** A cron tick and everything it sets going (the run, continuations, due retries). */
    async tick() {
      const reply = await fresh().trigger('cron');
      await poller.settle();
      return reply;
    },
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
