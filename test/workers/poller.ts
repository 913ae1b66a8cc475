import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import type { Poller } from '../../src/poller/durable-object.ts';

/** A fresh Poller Durable Object for one test, running the named config from TEST_POLLERS. */
export function newPoller(config: string) {
  const id = env.POLLER.idFromName(`t-${crypto.randomUUID()}`);
  // A fresh stub per call: after the object is aborted, an old stub stays broken.
  const fresh = () => env.POLLER.get(id);
  const sql = <T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]) =>
    runInDurableObject(fresh(), (_instance: Poller, state) =>
      state.storage.sql.exec<T>(query, ...bindings).toArray(),
    );
  return {
    stub: fresh,
    trigger: (kind: 'cron' | 'manual' = 'cron') => fresh().trigger(config, kind),
    status: () => fresh().status(config),
    runs: () => fresh().runs(100),
    /** Runs the alarm now, as the platform would at its time. */
    alarm: () => runDurableObjectAlarm(fresh()),
    /** A cron tick and the run it starts. */
    async tick() {
      const reply = await fresh().trigger(config, 'cron');
      await runDurableObjectAlarm(fresh());
      return reply;
    },
    sql,
    /** Sets the stored checkpoint, as if the last successful run had started then. */
    setCheckpoint: (at: number) => sql('UPDATE poller_state SET checkpoint = ?', at),
    checkpoint: async () =>
      (await sql<{ checkpoint: number | null }>('SELECT checkpoint FROM poller_state'))[0]
        ?.checkpoint ?? null,
    /** Moves the lease expiry into the past, as if its TTL had run out. */
    expireLease: () => sql('UPDATE poller_state SET lease_expires_at = ?', Date.now() - 1),
    /** Moves a booked retry to now, as if its backoff had passed. */
    dueWakeup: () =>
      sql('UPDATE poller_state SET wakeup_at = ? WHERE wakeup_at IS NOT NULL', Date.now()),
    /** Kills the object mid-whatever, as a deploy or a crash would; storage survives. */
    abort: () =>
      runInDurableObject(fresh(), (_instance: Poller, state) =>
        state.abort('test: simulated crash'),
      ).catch((error: unknown) => error),
    alarmAt: () =>
      runInDurableObject(fresh(), (_instance: Poller, state) => state.storage.getAlarm()),
    /** Runs alarms until none is due now (a continuation chain), at most `limit` times. */
    async drainAlarms(limit = 50) {
      let ran = 0;
      for (; ran < limit; ran += 1) {
        const at = await runInDurableObject(fresh(), (_instance: Poller, state) =>
          state.storage.getAlarm(),
        );
        if (at === null || at > Date.now()) break;
        await runDurableObjectAlarm(fresh());
      }
      return ran;
    },
  };
}
