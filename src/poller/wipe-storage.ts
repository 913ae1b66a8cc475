import { STATIC_INCARNATION } from '../catalog.ts';
import { migrate } from './migrations.ts';
import { SqliteStore } from './store/index.ts';

/**
 * Empties a poller's object, its alarm and every table, but for the tombstone of
 * `tombstone` and the epoch `epoch` that the next run goes on from (R14). With `staticLife`
 * (a name declared in POLLERS), the static poller's life starts at once: a tombstone refuses
 * runtime incarnations only. Returns the store over the fresh tables, made for `life`.
 */
export async function wipeStorage(
  storage: DurableObjectStorage,
  life: { readonly live: boolean },
  erased: { tombstone: number; epoch: number; staticLife: boolean },
): Promise<SqliteStore> {
  await storage.deleteAlarm();
  await storage.deleteAll();
  migrate(storage);
  const store = new SqliteStore(storage, life);
  store.markErased(erased.tombstone, erased.epoch);
  if (erased.staticLife) store.meta.setIncarnation(STATIC_INCARNATION);
  return store;
}
