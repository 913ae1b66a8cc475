import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { seededRandom } from '../../sim/random.ts';
import { STATIC_INCARNATION } from '../../src/catalog.ts';
import worker from '../../src/index.ts';
import { Poller } from '../../src/poller/durable-object.ts';
import { MIGRATIONS } from '../../src/poller/migrations.ts';
import { registryOf } from '../../src/registry/registry.ts';
import { runtimeConfig } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { handlers } from '../support/worker.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

const admin = (path: string, init: RequestInit = {}, token = TEST_SECRETS.ADMIN_TOKEN) =>
  exports.default.fetch(`https://tidemark.test${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });

describe('R8: dead letters', () => {
  it('dead-letters a poison update after exactly max_attempts runs while the rest of the stream flows', async () => {
    const poller = newPoller('poison', 'poison'); // max_attempts 3; the routes find it by name
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    upstream.add('poison-1', start + MINUTE);
    upstream.add('good-1', start + 2 * MINUTE);
    receiver.fail('poison-1', 500, 99);

    await poller.tick(); // attempt 1
    const first = await poller.status();
    expect(first.dead_letters.count).toBe(0);
    // R19: the poison update is stored with its record and C moves past its window; the run
    // is partial, and the poller warns of the update retrying rather than failing.
    expect(first.last_run).toMatchObject({ outcome: 'partial' });
    expect(first.state).toBe('warning');
    expect(first.warnings.join('\n')).toMatch(/^1 update retrying, oldest since /m);
    const moved = await poller.checkpoint();
    expect(moved).toBeGreaterThan(start + 2 * MINUTE);
    upstream.add('good-2', (moved ?? start) + 1); // stamped after the moved checkpoint
    await poller.retryNow(); // attempt 2
    expect((await poller.status()).dead_letters.count).toBe(0);
    await poller.retryNow(); // attempt 3: dead letter

    const status = await poller.status();
    expect(status.last_run).toMatchObject({ outcome: 'success', dead_lettered: 1 });
    expect(status.dead_letters.count).toBe(1);
    expect(status.dead_letters.oldest).not.toBeNull();
    expect(await poller.checkpoint()).toBeGreaterThanOrEqual(moved ?? start);
    expect(receiver.ids().sort()).toEqual(['good-1', 'good-2']);

    // The admin API lists it, with its record, key, error and attempts.
    const listed = (await (await admin('/pollers/poison/dead-letters')).json()) as {
      items: { key: string; attempts: number; error: string; record: { id: string } }[];
    };
    expect(listed.items).toHaveLength(1);
    const [letter] = listed.items;
    expect(letter).toMatchObject({ attempts: 3, record: { id: 'poison-1' } });
    expect(letter?.error).toContain('HTTP 500');
    const key = letter?.key ?? '';
    expect(key).toMatch(/^poison:poison-1:/);

    // Read-only and missing tokens cannot touch it.
    expect(
      (await admin('/pollers/poison/dead-letters', {}, TEST_SECRETS.STATUS_TOKEN)).status,
    ).toBe(403);
    expect(
      (await exports.default.fetch('https://tidemark.test/pollers/poison/dead-letters')).status,
    ).toBe(401);

    // Replay while the receiver still fails: 502, still there, one more attempt.
    const path = `/pollers/poison/dead-letters/${encodeURIComponent(key)}`;
    const failed = await admin(`${path}/replay`, { method: 'POST' });
    expect(failed.status).toBe(502);
    expect((await poller.status()).dead_letters.count).toBe(1);

    // The receiver is fixed: replay delivers it and removes it, and the audit log says so.
    receiver.fail('poison-1', 500, 0);
    const replayed = await admin(`${path}/replay`, { method: 'POST' });
    expect(replayed.status).toBe(200);
    expect(receiver.ids()).toContain('poison-1');
    const after = await poller.status();
    expect(after.dead_letters.count).toBe(0);
    expect(after.audit.map((entry) => entry.action)).toEqual([
      'dead_letter.replayed',
      'dead_letter.replay_failed',
    ]);
    expect((await admin(`${path}/replay`, { method: 'POST' })).status).toBe(404);
  });

  it('discards a dead letter only with a reason, and keeps the reason in the audit log', async () => {
    const poller = newPoller('poison');
    // This object is not the one the routes address; drive it directly.
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    upstream.add('bad', start + MINUTE);
    receiver.fail('bad', 422, 99);
    await poller.tick();
    await poller.retryNow();
    await poller.retryNow();
    const [letter] = (await poller.stub().deadLetters(10)).items;
    expect(letter?.attempts).toBe(3);
    const result = await poller
      .stub()
      .discardDeadLetter(STATIC_INCARNATION, letter?.key ?? '', 'customer deleted upstream');
    expect(result.outcome).toBe('discarded');
    const status = await poller.status();
    expect(status.dead_letters.count).toBe(0);
    expect(status.audit[0]).toMatchObject({
      action: 'dead_letter.discarded',
      detail: { reason: 'customer deleted upstream', id: 'bad' },
    });
  });

  it('answers 400 to a discard without a reason or without JSON, and 404 to an unknown poller', async () => {
    const path = '/pollers/poison/dead-letters/poison%3Ax%3A1';
    expect((await admin(path, { method: 'DELETE', body: '{}' })).status).toBe(400);
    expect((await admin(path, { method: 'DELETE', body: '{"reason":"  "}' })).status).toBe(400);
    expect((await admin(path, { method: 'DELETE', body: 'nope' })).status).toBe(400);
    expect((await admin(path, { method: 'DELETE', body: '{"reason":"gone"}' })).status).toBe(404);
    expect((await admin('/pollers/nope/dead-letters')).status).toBe(404);
    expect((await admin('/pollers/poison/dead-letters?limit=0')).status).toBe(400);
  });
});

describe('webhook batches', () => {
  it('sends batch = 100 as JSON arrays of at most 100 envelopes, each with its own key, signed per batch', async () => {
    const poller = newPoller('batched'); // per_page 250, batch 100
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    for (let i = 0; i < 250; i += 1) upstream.add(`b${i}`, start + 1_000 + i);
    receiver.fail('b0', 503, 1); // the first batch fails once, and is retried with the same id

    await poller.tick();
    await poller.retryNow();

    expect(new Set(receiver.ids()).size).toBe(250);
    const sizes = receiver.requests.map((request) => request.size);
    expect(Math.max(...sizes)).toBe(100);
    expect(sizes.filter((size) => size === 100).length).toBeGreaterThanOrEqual(2);
    const first = receiver.requests[0];
    const retried = receiver.requests.find(
      (request, index) => index > 0 && request.body === first?.body,
    );
    expect(retried?.headers.get('webhook-id')).toBe(first?.headers.get('webhook-id'));
    for (const request of receiver.requests) {
      const headers = Object.fromEntries(request.headers.entries());
      expect(headers['webhook-id']).toMatch(/^batch_[0-9a-f]{32}$/);
      expect(headers['tidemark-batch-id']).toBe(headers['webhook-id']);
      expect(() =>
        new Webhook(TEST_SECRETS.WEBHOOK_SECRET).verify(request.body, headers),
      ).not.toThrow();
      const envelopes = JSON.parse(request.body) as {
        id: string;
        version: string;
        idempotency_key: string;
      }[];
      for (const envelope of envelopes) {
        expect(envelope.idempotency_key).toBe(`batched:${envelope.id}:${envelope.version}`);
      }
    }
  });
});

describe('concurrency and order', () => {
  it('delivers with bounded concurrency, never two versions of one id at once, older first', async () => {
    const poller = newPoller('ordered'); // concurrency 6
    receiver.delayMs = 2;
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    for (let version = 0; version < 3; version += 1) {
      for (let id = 0; id < 12; id += 1)
        upstream.add(`o${id}`, start + 1_000 + version * 1_000 + id);
    }

    await poller.tick();

    expect(receiver.deliveries).toHaveLength(36);
    expect(receiver.overlaps).toEqual([]);
    expect(receiver.maxInFlight).toBeGreaterThan(1);
    expect(receiver.maxInFlight).toBeLessThanOrEqual(6);
    for (let id = 0; id < 12; id += 1) {
      const versions = receiver.deliveries
        .filter((d) => d.id === `o${id}`)
        .map((d) => Date.parse(d.version));
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
    }
  });

  it('holds back newer versions of an id while an older one fails', async () => {
    const poller = newPoller('ordered');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    upstream.add('x', start + 1_000);
    upstream.add('x', start + 2_000);
    upstream.add('y', start + 1_500);
    receiver.fail('x', 500, 1);
    await poller.tick();
    expect(receiver.ids()).toEqual(['y']); // x@2 waited for x@1
    await poller.retryNow();
    expect(receiver.deliveries.filter((d) => d.id === 'x').map((d) => d.version)).toEqual([
      new Date(start + 1_000).toISOString(),
      new Date(start + 2_000).toISOString(),
    ]);
  });
});

describe('queue delivery', () => {
  it('sends each record to the queue, and the consumer in this Worker runs the handler', async () => {
    const poller = newPoller('queued'); // handler: demo-sessions (D1)
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    for (let i = 0; i < 5; i += 1) upstream.add(`queued_${i}`, start + MINUTE + i);
    await poller.tick();
    expect((await poller.status()).last_run).toMatchObject({ outcome: 'success', records: 5 });
    await vi.waitUntil(
      async () => {
        const row = await env.DB.prepare(
          "SELECT COUNT(*) AS n FROM session_versions WHERE id LIKE 'queued_%'",
        ).first<{
          n: number;
        }>();
        return row?.n === 5;
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  describe('the consumer', () => {
    const original = handlers['demo-sessions'];
    afterEach(() => {
      if (original) handlers['demo-sessions'] = original;
    });

    const message = (id: string, attempts = 1) => ({
      id: `m-${id}`,
      timestamp: new Date(),
      attempts,
      body: {
        poller: 'queued',
        id,
        version: '2026-11-01T00:00:00.000Z',
        idempotency_key: `queued:${id}:2026-11-01T00:00:00.000Z`,
        record: { id, updated_at: '2026-11-01T00:00:00.000Z' },
      },
    });

    it('acks what the handler accepted and retries what it threw on, with the attempt number', async () => {
      const seen: { id: string; attempt: number; key: string }[] = [];
      handlers['demo-sessions'] = async (_record, context) => {
        seen.push({ id: context.id, attempt: context.attempt, key: context.idempotencyKey });
        if (context.id === 'boom') throw new Error('database is locked');
      };
      const batch = createMessageBatch('tidemark-deliveries', [
        message('fine'),
        message('boom', 3),
        { ...message('junk'), body: { nope: 1 } as never },
      ]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env, ctx);
      const result = await getQueueResult(batch, ctx);
      expect(result.explicitAcks).toEqual(['m-fine']);
      expect(result.retryMessages.map((m) => m.msgId).sort()).toEqual(['m-boom', 'm-junk']);
      expect(seen).toEqual([
        { id: 'fine', attempt: 1, key: 'queued:fine:2026-11-01T00:00:00.000Z' },
        { id: 'boom', attempt: 3, key: 'queued:boom:2026-11-01T00:00:00.000Z' },
      ]);
    });
  });
});

describe("the queue's dead-letter queue", () => {
  it('turns each message the consumer gave up on into a dead letter of its poller, replayable', async () => {
    const body = {
      poller: 'queued',
      id: 'lost-cause',
      version: '2026-11-01T00:00:00.000Z',
      idempotency_key: 'queued:lost-cause:2026-11-01T00:00:00.000Z',
      record: { id: 'lost-cause' },
    };
    const batch = createMessageBatch('tidemark-deliveries-dlq', [
      { id: 'dlq-1', timestamp: new Date(), attempts: 6, body },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(['dlq-1']);
    const poller = newPoller('queued', 'queued');
    const status = await poller.status();
    expect(status.dead_letters.count).toBe(1);
    const [letter] = (await poller.stub().deadLetters(10)).items;
    expect(letter).toMatchObject({
      key: body.idempotency_key,
      id: 'lost-cause',
      attempts: 6,
      record: { id: 'lost-cause' },
    });
    expect(letter?.error).toContain('dead-letter queue');
  });

  describe('when storing a dead letter fails', () => {
    const store = Poller.prototype.queueDeadLetter;
    afterEach(() => {
      Poller.prototype.queueDeadLetter = store;
    });

    it('retries the message with a delay instead of acking it, and still stores the rest of the batch', async () => {
      Poller.prototype.queueDeadLetter = async function (this: Poller, meant, message) {
        if (message.id === 'unlucky') throw new Error('Durable Object storage is overloaded');
        return store.call(this, meant, message);
      };
      // A poller of this test's own (runtime, so that it exists without a deploy), so that
      // other tests' dead letters do not mix in.
      const poller = `queued-${crypto.randomUUID()}`;
      await registryOf(env).beginPut(poller, runtimeConfig(), {}, Date.now());
      const body = (id: string) => ({
        poller,
        id,
        version: '2026-11-01T00:00:00.000Z',
        idempotency_key: `${poller}:${id}:2026-11-01T00:00:00.000Z`,
        record: { id },
      });
      const batch = createMessageBatch('tidemark-deliveries-dlq', [
        { id: 'dlq-unlucky', timestamp: new Date(), attempts: 1, body: body('unlucky') },
        { id: 'dlq-fine', timestamp: new Date(), attempts: 1, body: body('fine') },
        // Not one of ours: kept too (retried into the last-resort queue), never acked away.
        { id: 'dlq-junk', timestamp: new Date(), attempts: 1, body: { nope: 1 } as never },
      ]);
      const delays = new Map<string, number | undefined>();
      for (const message of batch.messages) {
        const retry = message.retry.bind(message);
        vi.spyOn(message, 'retry').mockImplementation((options) => {
          delays.set(message.id, options?.delaySeconds);
          retry(options);
        });
      }
      const ctx = createExecutionContext();
      await worker.queue(batch, env, ctx);
      const result = await getQueueResult(batch, ctx);

      expect(result.explicitAcks).toEqual(['dlq-fine']);
      expect(result.retryBatch.retry).toBe(false);
      expect(result.retryMessages.map((m) => m.msgId).sort()).toEqual(['dlq-junk', 'dlq-unlucky']);
      expect(delays.get('dlq-unlucky')).toBeGreaterThan(0);
      expect(delays.get('dlq-junk')).toBeGreaterThan(0);
      const stored = await env.POLLER.get(env.POLLER.idFromName(poller)).deadLetters(10);
      expect(stored.items.map((letter) => letter.id)).toEqual(['fine']);
    });
  });
});

describe('idempotency keys of ids with ":" or "%"', () => {
  it('moves a failure stored under the old key to the new one, so it is retried and cleared and holds no newer version back', async () => {
    const poller = newPoller('seed');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    const older = upstream.add('org:1', start + MINUTE);
    const newer = upstream.add('org:1', start + 2 * MINUTE);
    // Failed once under an earlier version of tidemark, which keyed it `seed:org:1:<version>`.
    await poller.sql(
      `INSERT INTO delivery_failures
         (key, id, version, version_ms, record, attempts, first_failure, last_failure, last_error)
       VALUES (?, ?, ?, ?, ?, 1, ?, ?, 'HTTP 503')`,
      `seed:org:1:${older.updatedAt}`,
      'org:1',
      older.updatedAt,
      older.updatedAtMs,
      JSON.stringify({ id: 'org:1', updated_at: older.updatedAt, status: 'active' }),
      start,
      start,
    );
    // The upgrade's migration (applied when this object was created, before the row existed)
    // run over it, as it runs over the rows of an object created before the upgrade.
    const rekey = MIGRATIONS.find((statement) => statement.includes("'%3A'"));
    if (rekey) await poller.sql(rekey);

    await poller.tick();

    expect((await poller.status()).last_run?.outcome).toBe('success');
    expect(receiver.deliveries.map((d) => [d.version, d.key])).toEqual([
      [older.updatedAt, `seed:org%3A1:${older.updatedAt}`],
      [newer.updatedAt, `seed:org%3A1:${newer.updatedAt}`],
    ]);
    expect(await poller.sql('SELECT key FROM delivery_failures')).toEqual([]);
    expect(await poller.checkpoint()).toBeGreaterThan(start);
  });

  it("re-keys every stored failure of such an id, even one whose new key is another failure's old key", async () => {
    const poller = newPoller('seed');
    const insert = (key: string, id: string) =>
      poller.sql(
        `INSERT INTO delivery_failures
           (key, id, version, version_ms, record, attempts, first_failure, last_failure, last_error)
         VALUES (?, ?, 'v', 0, 'null', 1, 0, 0, 'HTTP 503')`,
        key,
        id,
      );
    await insert('seed:b:c:v', 'b:c'); // its new key, seed:b%3Ac:v, is the next row's old one
    await insert('seed:b%3Ac:v', 'b%3Ac');
    await insert('seed:plain:v', 'plain');
    const rekey = MIGRATIONS.find((statement) => statement.includes("'%3A'"));
    if (rekey) await poller.sql(rekey);
    const rows = await poller.sql<{ key: string; id: string }>(
      'SELECT key, id FROM delivery_failures ORDER BY id',
    );
    expect(rows).toEqual([
      { key: 'seed:b%253Ac:v', id: 'b%3Ac' },
      { key: 'seed:b%3Ac:v', id: 'b:c' },
      { key: 'seed:plain:v', id: 'plain' },
    ]);
  });
});

describe('R19: a flaky receiver does not stall the checkpoint', () => {
  it('moves C past a failing delivery, holds the newer version of its id behind it, and delivers both in order on the retry', async () => {
    const poller = newPoller('seed');
    const start = Date.now() - 10 * MINUTE;
    await poller.setCheckpoint(start);
    const v1 = upstream.add('x', start + MINUTE);
    const v2 = upstream.add('x', start + 2 * MINUTE);
    upstream.add('y', start + 3 * MINUTE);
    receiver.fail('x', 500, 1);

    await poller.tick();
    const status = await poller.status();
    expect(status.last_run).toMatchObject({ outcome: 'partial' });
    expect(await poller.checkpoint()).toBeGreaterThan(start + 3 * MINUTE);
    // x@1 failing and x@2 held behind it: both stored with their records, neither lost.
    expect(status.state).toBe('warning');
    expect(status.warnings.join('\n')).toMatch(/^2 updates retrying, oldest since /m);
    expect(status.alerts).toEqual([]);
    expect(receiver.ids()).toEqual(['y']);
    expect(
      (
        await poller.sql<{ version: string }>(
          'SELECT version FROM delivery_failures ORDER BY version',
        )
      ).map((row) => row.version),
    ).toEqual([v1.updatedAt, v2.updatedAt]);

    await poller.retryNow();
    expect((await poller.status()).last_run).toMatchObject({ outcome: 'success' });
    expect(receiver.deliveries.filter((d) => d.id === 'x').map((d) => d.version)).toEqual([
      v1.updatedAt,
      v2.updatedAt,
    ]);
    expect(await poller.sql('SELECT key FROM delivery_failures')).toEqual([]);
    expect((await poller.status()).state).toBe('ok');
  });
});

describe('the ledger and the cost of a record', () => {
  it('keeps ledger rows bounded and writes far less than one row per record in steady state', async () => {
    const poller = newPoller('batched'); // batch 100: one request per 100 records
    const base = Date.now() - 60 * MINUTE;
    let records = 0;
    const ledger: number[] = [];
    const before = (await poller.stub().storageStats()).rowsWritten;
    for (let run = 0; run < 20; run += 1) {
      // Minute `run` of an hour: the last run started at its beginning, 100 updates since.
      const minute = base + run * MINUTE;
      await poller.setCheckpoint(minute);
      for (let i = 0; i < 100; i += 1) upstream.add(`s${run}-${i}`, minute + i * 500);
      records += 100;
      await poller.tick();
      ledger.push((await poller.stub().storageStats()).ledgerRows);
    }
    expect(new Set(receiver.ids()).size).toBe(records);
    expect(receiver.deliveries).toHaveLength(records);
    const written = (await poller.stub().storageStats()).rowsWritten - before;
    expect(written / records).toBeLessThan(0.1);
    expect(Math.max(...ledger)).toBeLessThan(5);
  });
});

describe('done when: 10% transient failures and one poison record', () => {
  it('delivers or dead-letters every update, and delivers none twice', async () => {
    const poller = newPoller('poison'); // max_attempts 3
    receiver.flaky = { rate: 0.1, random: seededRandom(42) };
    const start = Date.now() - 120 * MINUTE;
    await poller.setCheckpoint(start);
    upstream.add('poison', start + 500);
    receiver.fail('poison', 500, 1_000);
    for (let i = 0; i < 300; i += 1) upstream.add(`u${i}`, start + 1_000 + i * 20_000);

    await poller.tick();
    for (
      let retry = 0;
      retry < 30 && (await poller.status()).next_wakeup?.reason === 'retry';
      retry += 1
    ) {
      await poller.retryNow();
    }

    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('success');
    const delivered = receiver.deliveries.map((d) => `${d.id}@${d.version}`);
    expect(new Set(delivered).size).toBe(delivered.length); // no update twice
    expect(status.dead_letters.count).toBe(1);
    const dead = (await poller.stub().deadLetters(10)).items.map((letter) => letter.id);
    expect(dead).toEqual(['poison']);
    const handled = new Set([...delivered, `poison@${upstream.updates[0]?.updatedAt}`]);
    expect(
      upstream.updates.map((u) => `${u.id}@${u.updatedAt}`).filter((key) => !handled.has(key)),
    ).toEqual([]);
    expect(receiver.requests.length).toBeGreaterThan(300); // the 10% failures did happen
  });
});
