import { runInDurableObject } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { beforeEach, describe, expect, it } from 'vitest';
import { STATIC_INCARNATION } from '../../src/catalog.ts';
import { loadPoller } from '../../src/config/load.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { Deliverer, RunContext, Source, Update } from '../../src/engine/ports.ts';
import type { Poller } from '../../src/poller/durable-object.ts';
import { MAX_RECORD_BYTES } from '../../src/poller/record-text.ts';
import {
  AUDIT_LIMIT,
  DEAD_LETTER_CAP,
  DEAD_LETTER_CAP_PRUNED_TO,
  DEAD_LETTER_PRUNE_BATCH,
  DEAD_LETTER_PRUNE_EVERY_MS,
  HISTORY_LIMIT,
  SqliteStore,
  TABLES,
} from '../../src/poller/store/index.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller, writtenBehindTheStore } from './poller.ts';
import { probeSql } from './sql-probe.ts';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const { ADMIN_TOKEN, STATUS_TOKEN } = TEST_SECRETS;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

function call(method: string, path: string, token: string, body?: string) {
  return exports.default.fetch(`https://tidemark.test${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body }),
  });
}

/** Keeps a dead letter as the queue's dead-letter queue hands it over: first failed at `at`. */
function deadLetter(poller: ReturnType<typeof newPoller>, key: string, at: number) {
  return poller.stub().queueDeadLetter(STATIC_INCARNATION, {
    key,
    id: key,
    version: new Date(at).toISOString(),
    record: '{}',
    attempts: 5,
    at,
  });
}

/** Writes `count` dead letters straight into storage, first failed a ms apart from `from`. */
function fillDeadLetters(poller: ReturnType<typeof newPoller>, count: number, from: number) {
  return runInDurableObject(poller.stub(), (instance: Poller, state) =>
    state.storage.transactionSync(() => {
      writtenBehindTheStore(instance);
      for (let i = 0; i < count; i += 1) {
        const key = `k${String(i).padStart(6, '0')}`;
        state.storage.sql.exec(
          `INSERT INTO dead_letters (key, kind, id, version, version_ms, record, error, attempts, first_failure, last_failure)
           VALUES (?, 'delivery', ?, '2026-01-01T00:00:00Z', 0, '{"id":1}', 'HTTP 422', 5, ?, ?)`,
          key,
          key,
          from + i,
          from + i,
        );
      }
    }),
  );
}

const keys = async (poller: ReturnType<typeof newPoller>) =>
  (await poller.sql<{ key: string }>('SELECT key FROM dead_letters ORDER BY key')).map(
    (row) => row.key,
  );

const prunes = async (poller: ReturnType<typeof newPoller>) =>
  (await poller.status()).audit.filter((entry) => entry.action === 'dead_letter.pruned');

describe('dead letters are kept for dead_letter_retention, and at most DEAD_LETTER_CAP', () => {
  it('prunes those first failed longer ago than dead_letter_retention when a run ends, with one audit entry and a counter in status and /metrics', async () => {
    const poller = newPoller('retained', 'retained'); // dead_letter_retention: 7d
    const now = Date.now();
    await deadLetter(poller, 'old-1', now - 8 * DAY);
    await deadLetter(poller, 'old-2', now - 7 * DAY - MINUTE);
    await deadLetter(poller, 'young', now - 6 * DAY);
    await poller.setCheckpoint(now - MINUTE);

    await poller.tick();

    expect(await keys(poller)).toEqual(['young']);
    const status = await poller.status();
    expect(status.dead_letters).toMatchObject({ count: 1, pruned: 2, retention: '7d' });
    expect(status.counters.dead_letters_pruned).toBe(2);
    expect(status.storage.tables.dead_letters.rows).toBe(1);
    const [entry] = await prunes(poller);
    expect(entry?.detail).toMatchObject({
      count: 2,
      oldest_key: 'old-1',
      past_retention: 2,
      beyond_cap: 0,
      retention: '7d',
    });
    const metrics = parsePrometheusTextFormat(
      await (await call('GET', '/metrics', STATUS_TOKEN)).text(),
    );
    const sample = (name: string) =>
      metrics
        .find((family) => family.name === name)
        ?.metrics.find((metric) => metric.labels?.poller === 'retained')?.value;
    expect(sample('tidemark_dead_letters_pruned_total')).toBe('2');
    expect(sample('tidemark_dead_letters')).toBe('1');
  });

  it('prunes the oldest beyond the cap down to DEAD_LETTER_CAP_PRUNED_TO, at most DEAD_LETTER_PRUNE_BATCH per run', async () => {
    const poller = newPoller('crowded');
    const total = DEAD_LETTER_CAP_PRUNED_TO + DEAD_LETTER_PRUNE_BATCH + 2_000;
    await fillDeadLetters(poller, total, Date.now() - 60 * MINUTE);
    await poller.setCheckpoint(Date.now() - MINUTE);

    await poller.tick();
    expect((await poller.status()).dead_letters.count).toBe(total - DEAD_LETTER_PRUNE_BATCH);
    expect((await prunes(poller))[0]?.detail).toMatchObject({
      count: DEAD_LETTER_PRUNE_BATCH,
      oldest_key: 'k000000',
      beyond_cap: DEAD_LETTER_PRUNE_BATCH,
      cap: DEAD_LETTER_CAP,
      more_left: true,
    });

    await poller.tick();
    const status = await poller.status();
    expect(status.dead_letters).toMatchObject({
      count: DEAD_LETTER_CAP_PRUNED_TO,
      pruned: total - DEAD_LETTER_CAP_PRUNED_TO,
    });
    expect((await prunes(poller))[0]?.detail).toMatchObject({ count: 2_000, more_left: false });
    // The newest are the ones kept.
    const [oldest] = await poller.sql<{ key: string }>(
      'SELECT key FROM dead_letters ORDER BY first_failure LIMIT 1',
    );
    expect(oldest?.key).toBe(`k${String(total - DEAD_LETTER_CAP_PRUNED_TO).padStart(6, '0')}`);

    await poller.tick();
    expect(await prunes(poller)).toHaveLength(2); // under the cap: nothing more to do
  });
});

describe('the audit log keeps the newest AUDIT_LIMIT entries', () => {
  it('drops the oldest as each new one is written', async () => {
    const poller = newPoller('seed');
    const kept = await runInDurableObject(poller.stub(), (_instance: Poller, state) => {
      const store = new SqliteStore(state.storage);
      for (let i = 0; i < AUDIT_LIMIT + 50; i += 1) {
        store.appendAudit({ at: i, action: 'test.entry', detail: { i } });
      }
      return {
        rows: state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM audit_log').one().n,
        newest: store.auditLog(1)[0]?.detail,
        counted: store.tableSizes().audit_log.rows,
      };
    });
    expect(kept).toEqual({
      rows: AUDIT_LIMIT,
      newest: { i: AUDIT_LIMIT + 49 },
      counted: AUDIT_LIMIT,
    });
  });
});

describe('status, health and metrics read counters, never a whole table', () => {
  it('answer with 100,000 dead letters reading a handful of rows, not the table', async () => {
    const poller = newPoller('crowded', 'crowded');
    await fillDeadLetters(poller, 100_000, Date.now() - 60 * MINUTE);
    const probe = await probeSql(poller.stub());

    const status = (await (await call('GET', '/status/crowded', STATUS_TOKEN)).json()) as {
      dead_letters: { count: number };
      storage: { tables: Record<string, { rows: number; bytes: number }> };
    };
    const health = (await (await call('GET', '/healthz', STATUS_TOKEN)).json()) as {
      warnings: Record<string, string[]>;
    };
    const metrics = await (await call('GET', '/metrics', STATUS_TOKEN)).text();
    await probe.stop();

    expect(status.dead_letters.count).toBe(100_000);
    expect(status.storage.tables.dead_letters?.rows).toBe(100_000);
    expect(status.storage.tables.dead_letters?.bytes).toBeGreaterThan(100_000 * 20);
    expect(health.warnings.crowded?.[0]).toContain('100000 dead letters');
    expect(metrics).toContain('tidemark_dead_letters{poller="crowded"} 100000');
    const statements = probe.statements();
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      expect(statement.rowsRead, statement.query).toBeLessThanOrEqual(HISTORY_LIMIT);
    }
    expect(statements.reduce((sum, statement) => sum + statement.rowsRead, 0)).toBeLessThan(1_000);
  });
});

describe('a record nested 100,000 levels deep', () => {
  const DEPTH = 100_000;

  it('becomes a dead letter that is listed as its text with a note, refused for replay with the reason, and discarded', async () => {
    const poller = newPoller('one_attempt', 'one_attempt'); // max_attempts: 1
    await poller.setCheckpoint(Date.now() - MINUTE);
    const at = new Date(Date.now() - 30_000).toISOString();
    const payload = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
    upstream.respondOnce(
      () =>
        new Response(
          `{"sessions":[{"id":"deep","updated_at":"${at}","payload":${payload}},{"id":"plain","updated_at":"${at}"}],"next_cursor":null}`,
          { headers: { 'content-type': 'application/json' } },
        ),
    );
    receiver.fail('deep', 422, 10);

    await poller.tick();

    const status = await poller.status();
    expect(status.last_run).toMatchObject({ outcome: 'success', dead_lettered: 1 });
    expect(receiver.ids()).toEqual(['plain']);
    const listed = await call('GET', '/pollers/one_attempt/dead-letters', ADMIN_TOKEN);
    expect(listed.status).toBe(200);
    const { items } = (await listed.json()) as {
      items: { key: string; record: unknown; record_text?: string; record_note?: string }[];
    };
    expect(items).toHaveLength(1);
    const [letter] = items;
    expect(letter?.record).toBeNull();
    expect(letter?.record_text).toBe(`{"id":"deep","updated_at":"${at}","payload":${payload}}`);
    expect(letter?.record_note).toContain(`nested ${DEPTH + 1} levels deep, more than 64`);

    const path = `/pollers/one_attempt/dead-letters/${encodeURIComponent(letter?.key ?? '')}`;
    const replay = await call('POST', `${path}/replay`, ADMIN_TOKEN);
    expect(replay.status).toBe(409);
    expect(await replay.json()).toMatchObject({ outcome: 'too_deep' });
    expect(receiver.ids()).toEqual(['plain']);

    const discard = await call('DELETE', path, ADMIN_TOKEN, '{"reason":"hostile payload"}');
    expect(discard.status).toBe(200);
    expect((await poller.status()).dead_letters.count).toBe(0);
  });

  it('larger than MAX_RECORD_BYTES but shallow is listed as its text, and replayed as JSON', async () => {
    const poller = newPoller('one_attempt', 'one_attempt');
    await poller.setCheckpoint(Date.now() - MINUTE);
    const at = new Date(Date.now() - 30_000).toISOString();
    const big = 'x'.repeat(MAX_RECORD_BYTES);
    upstream.respondOnce(() =>
      Response.json({ sessions: [{ id: 'big', updated_at: at, big }], next_cursor: null }),
    );
    receiver.fail('big', 422, 1);
    await poller.tick();

    const { items } = (await (
      await call('GET', '/pollers/one_attempt/dead-letters', ADMIN_TOKEN)
    ).json()) as { items: { key: string; record: unknown; record_note?: string }[] };
    const letter = items.find((item) => item.key.includes(':big:'));
    expect(letter?.record).toBeNull();
    expect(letter?.record_note).toContain(`more than ${MAX_RECORD_BYTES}`);

    const path = `/pollers/one_attempt/dead-letters/${encodeURIComponent(letter?.key ?? '')}`;
    expect((await call('POST', `${path}/replay`, ADMIN_TOKEN)).status).toBe(200);
    const delivered = receiver.deliveries.find((delivery) => delivery.id === 'big');
    expect((JSON.parse(delivered?.body ?? '{}') as { record: { big: string } }).record.big).toBe(
      big,
    );
  });
});

describe('10,000 runs with 1% poison records', () => {
  it('leave every table under its bound, and the kept sizes equal to what the tables hold', async () => {
    const stub = env.POLLER.get(env.POLLER.idFromName(`t-${crypto.randomUUID()}`));
    const outcome = await runInDurableObject(stub, async (_instance: Poller, state) => {
      const entry = loadPoller(
        'soak',
        {
          cron: '*/5 * * * *',
          max_attempts: 3,
          source: { url: 'https://soak.test/x', from_param: 'from' },
          deliver: { type: 'handler', name: 'soak' },
        },
        {},
      );
      if (!entry.ok) throw new Error(entry.errors.join('\n'));
      const { config } = entry;
      const store = new SqliteStore(state.storage);
      store.deadLetterRetention = config.dead_letter_retention;
      let now = Date.parse('2026-01-01T00:00:00Z');
      let produced = 0;
      let updates: Update[] = [];
      // The upstream lists what changed since `from`; every hundredth record is a poison one
      // the receiver always refuses (a 422).
      const source: Source = {
        fetchPage: async (window) => ({
          ok: true,
          updates: updates.filter((update) => update.versionMs >= window.from),
          malformed: [],
          next: null,
        }),
      };
      const deliverer: Deliverer = {
        deliver: async (items) =>
          items.some((item) => item.update.id.startsWith('poison'))
            ? { kind: 'rejected', error: 'HTTP 422' }
            : { kind: 'delivered' },
      };
      const context: RunContext = {
        poller: 'soak',
        config,
        store,
        source,
        deliverer,
        now: () => now,
        random: () => 0.5,
      };
      const engine = new PollerEngine(context, { set: async () => {} });
      let deadLettered = 0;
      for (let run = 0; run < 10_000; run += 1) {
        for (let i = 0; i < 10; i += 1) {
          const id = produced % 100 === 99 ? `poison${produced}` : `r${produced}`;
          const versionMs = now + i * 30_000;
          const version = new Date(versionMs).toISOString();
          updates.push({ id, version, versionMs, record: { id, version } });
          produced += 1;
        }
        now += 5 * MINUTE;
        const reply = await engine.runNow();
        if (reply.outcome === 'ran') deadLettered += reply.run.deadLettered;
        const checkpoint = store.read().checkpoint ?? 0;
        updates = updates.filter((update) => update.versionMs >= checkpoint);
      }
      const sql = state.storage.sql;
      const counted = (table: string) =>
        sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n;
      return {
        now,
        deadLettered,
        sizes: store.tableSizes(),
        rows: Object.fromEntries(TABLES.map((table) => [table, counted(table)])) as Record<
          (typeof TABLES)[number],
          number
        >,
        bytes: {
          ledger: sql
            .exec<{ b: number }>(
              'SELECT COALESCE(SUM(octet_length(id) + octet_length(version) + 8), 0) AS b FROM ledger',
            )
            .one().b,
          dead_letters: sql
            .exec<{ b: number }>(
              'SELECT COALESCE(SUM(octet_length(key) + octet_length(record) + octet_length(error) + 64), 0) AS b FROM dead_letters',
            )
            .one().b,
          audit_log: sql
            .exec<{ b: number }>(
              'SELECT COALESCE(SUM(octet_length(action) + octet_length(detail) + 16), 0) AS b FROM audit_log',
            )
            .one().b,
        },
        oldestDeadLetter: sql
          .exec<{ at: number | null }>('SELECT MIN(first_failure) AS at FROM dead_letters')
          .one().at,
        pruned: store.counters().dead_letters_pruned,
        runs: store.counters().runs,
      };
    });

    expect(outcome.runs).toBe(10_000);
    expect(outcome.deadLettered).toBeGreaterThan(990); // 1% of 100,000 records
    // Every table is under its bound.
    expect(outcome.rows.runs).toBe(HISTORY_LIMIT);
    expect(outcome.rows.audit_log).toBeLessThanOrEqual(AUDIT_LIMIT);
    expect(outcome.rows.ledger).toBeLessThan(100);
    expect(outcome.rows.delivery_failures).toBeLessThan(10);
    expect(outcome.rows.dead_letters).toBeLessThanOrEqual(DEAD_LETTER_CAP);
    // Dead letters older than the retention (and the hour between two prunes) are gone.
    expect(outcome.oldestDeadLetter).toBeGreaterThanOrEqual(
      outcome.now - 14 * DAY - DEAD_LETTER_PRUNE_EVERY_MS - 5 * MINUTE,
    );
    expect(outcome.rows.dead_letters).toBeLessThan(450); // 14 days of 28.8 a day, about 403
    expect(outcome.pruned + outcome.rows.dead_letters).toBe(outcome.deadLettered);
    // The kept sizes are the tables' own.
    for (const table of TABLES) expect(outcome.sizes[table].rows, table).toBe(outcome.rows[table]);
    expect(outcome.sizes.ledger.bytes).toBe(outcome.bytes.ledger);
    expect(outcome.sizes.dead_letters.bytes).toBe(outcome.bytes.dead_letters);
    expect(outcome.sizes.audit_log.bytes).toBe(outcome.bytes.audit_log);
  }, 30_000);
});
