import { settableAlarmTime } from '../engine/iso-time.ts';
import { type AlarmPort, PollerEngine } from '../engine/poller.ts';
import type { FreshnessStore, RunContext } from '../engine/ports.ts';
import type { SqliteStore } from './store/index.ts';
import type { Wiring } from './wiring.ts';

/** The engine of a poller whose config loads, with what built it; or why it does not load. */
export type EngineOf =
  | { ok: true; engine: PollerEngine; context: RunContext; redact: (text: string) => string }
  | { ok: false; errors: string[]; engine?: undefined };

/**
 * The engine over the object's store, freshness and alarm, for one life of the object: once
 * that life ended (erased), its alarm writes are refused, as its store's writes are (R14).
 */
export function engineOf(
  wiring: Wiring,
  store: SqliteStore,
  freshness: FreshnessStore,
  storage: DurableObjectStorage,
  life: { readonly live: boolean },
): EngineOf {
  if (!wiring.ok) return wiring;
  store.deadLetters.retention = wiring.context.config.dead_letter_retention;
  const redact = wiring.context.redact ?? ((text: string) => text);
  const context: RunContext = { ...wiring.context, freshness };
  const engine = new PollerEngine(context, alarmPort(store, storage, life));
  return { ok: true, engine, context, redact };
}

/** The Durable Object's one alarm, as the engine sets it from storage. */
function alarmPort(
  store: SqliteStore,
  storage: DurableObjectStorage,
  life: { readonly live: boolean },
): AlarmPort {
  return {
    set: async (at: number | null) => {
      if (!life.live) return; // the alarm is the next incarnation's
      // Each set or delete is billed as a row written: one that changes nothing is skipped.
      const wanted = at === null ? null : settableAlarmTime(at);
      if ((await storage.getAlarm()) === wanted) return;
      if (wanted === null) await storage.deleteAlarm();
      else await storage.setAlarm(wanted);
      store.countAlarmWrite();
    },
    get: () => storage.getAlarm(),
  };
}
