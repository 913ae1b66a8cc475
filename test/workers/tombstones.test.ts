import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import worker from '../../src/index.ts';
import { api, createPoller, objectOf } from '../support/fleet.ts';
import { handlers } from '../support/worker.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

/** A runtime poller whose stream marks deleted records as `deleted` says, run once. */
async function runWith(deleted: Record<string, unknown>) {
  const name = await createPoller('tombstones', { sinceMs: 10 * MINUTE, source: { deleted } });
  const reply = await objectOf(name).runNow();
  await api('DELETE', `/pollers/${name}`);
  return reply;
}

const seen = () => receiver.deliveries.map((d) => [d.id, d.op, d.type]);

describe('tombstones in the stream (source.deleted, R15)', () => {
  it('delivers a record whose status equals the value as a delete, record.deleted, and the rest as upserts', async () => {
    upstream.add('kept', Date.now() - 3 * MINUTE);
    upstream.add('gone', Date.now() - 2 * MINUTE, { fields: { status: 'deleted' } });

    await runWith({ path: 'status', equals: 'deleted' });

    expect(seen()).toEqual([
      ['kept', 'upsert', 'record.updated'],
      ['gone', 'delete', 'record.deleted'],
    ]);
  });

  it('reads a path that is there and not null as deleted, without equals', async () => {
    upstream.add('live', Date.now() - 3 * MINUTE, { fields: { deleted_at: null } });
    upstream.add('dead', Date.now() - 2 * MINUTE, {
      fields: { deleted_at: new Date(Date.now() - 2 * MINUTE).toISOString() },
    });

    await runWith({ path: 'deleted_at' });

    expect(seen()).toEqual([
      ['live', 'upsert', 'record.updated'],
      ['dead', 'delete', 'record.deleted'],
    ]);
  });

  it('delivers the delete of an id after the update of it that the same run delivers', async () => {
    upstream.add('x', Date.now() - 4 * MINUTE);
    upstream.add('x', Date.now() - 1 * MINUTE, { fields: { status: 'deleted' } });

    await runWith({ path: 'status', equals: 'deleted' });

    expect(seen()).toEqual([
      ['x', 'upsert', 'record.updated'],
      ['x', 'delete', 'record.deleted'],
    ]);
  });

  it('goes through the same ledger: a delete delivered is not delivered again by the next window', async () => {
    upstream.add('once', Date.now() - 2 * MINUTE, { fields: { status: 'deleted' } });
    const name = await createPoller('tombstone-ledger', {
      sinceMs: 10 * MINUTE,
      overlap: '5m',
      source: { deleted: { path: 'status', equals: 'deleted' } },
    });
    await objectOf(name).runNow();
    await objectOf(name).runNow();
    expect(seen()).toEqual([['once', 'delete', 'record.deleted']]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('marks nothing as a delete without source.deleted, whatever the record says', async () => {
    upstream.add('plain', Date.now() - 2 * MINUTE, { fields: { status: 'deleted' } });
    const name = await createPoller('no-tombstones', { sinceMs: 10 * MINUTE });
    await objectOf(name).runNow();
    expect(seen()).toEqual([['plain', 'upsert', 'record.updated']]);
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('a queued delete reaches its handler as a delete', () => {
  const original = handlers['demo-sessions'];
  afterEach(() => {
    if (original) handlers['demo-sessions'] = original;
  });

  it("passes the message's op to the handler, and upsert for a message from before the field", async () => {
    const ops: string[] = [];
    handlers['demo-sessions'] = async (_record, context) => {
      ops.push(`${context.id}:${context.op}`);
    };
    const message = (id: string, op?: string) => ({
      id: `m-${id}`,
      timestamp: new Date(),
      attempts: 1,
      body: {
        poller: 'queued',
        ...(op === undefined ? {} : { op }),
        id,
        version: '2026-11-01T00:00:00.000Z',
        idempotency_key: `queued:${id}:2026-11-01T00:00:00.000Z`,
        record: { id },
      },
    });
    const batch = createMessageBatch('tidemark-deliveries', [
      message('d', 'delete'),
      message('u', 'upsert'),
      message('old'),
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks.sort()).toEqual(['m-d', 'm-old', 'm-u']);
    expect(ops).toEqual(['d:delete', 'u:upsert', 'old:upsert']);
  });
});
