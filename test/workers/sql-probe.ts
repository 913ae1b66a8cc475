import { runInDurableObject } from 'cloudflare:test';
import type { Poller } from '../../src/poller/durable-object.ts';

type Cursor = SqlStorageCursor<Record<string, SqlStorageValue>>;

/**
 * Watches every SQL statement a Poller object runs until `stop()`, with the rows each one
 * read (the cursor's rowsRead, what Cloudflare bills as rows read): to show what a route
 * costs without timing it.
 */
export async function probeSql(stub: DurableObjectStub<Poller>) {
  const seen: { query: string; cursor: Cursor }[] = [];
  await runInDurableObject(stub, (_instance: Poller, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec;
    sql.exec = function (this: SqlStorage, query: string, ...bindings: unknown[]) {
      const cursor = exec.call(this, query, ...bindings);
      seen.push({ query, cursor });
      return cursor;
    } as typeof sql.exec;
  });
  return {
    /** The statements run so far, with the rows each read. */
    statements: () =>
      seen.map(({ query, cursor }) => ({
        query: query.replace(/\s+/g, ' ').trim(),
        rowsRead: cursor.rowsRead,
      })),
    stop: () =>
      runInDurableObject(stub, (_instance: Poller, state) => {
        Reflect.deleteProperty(state.storage.sql, 'exec');
      }),
  };
}
