import type { DeliverType } from '../../src/delivery/kinds/index.ts';
import { handlers } from '../../src/handlers/index.ts';
import type { HttpFetch } from '../../src/sources/http-source.ts';

/**
 * A fake destination for each delivery kind, for the shared case suite
 * (test/engine/delivery-kinds.test.ts): the `deliver` table, and an env and a fetcher whose
 * sends (a request, a sendBatch, a handler call) are counted.
 */

/** Where one kind's sends land, for one test. */
export interface Destination {
  env: Env;
  fetcher: HttpFetch;
  /** Every send so far, as the destination saw it. */
  sends: unknown[];
  /** The op (upsert or delete) each record sent so far carried, in order. */
  ops: string[];
  /** Undoes what it set up (a handler registered for the test). */
  close(): void;
}

export interface KindFake {
  /** `deliver` for this kind, as written in the config. */
  deliver: Record<string, unknown>;
  /** Records one send of this table takes. */
  batch: number;
  /** The handler the queue consumer runs for a poller named "p" with this table. */
  queueHandler: string;
  destination(): Destination;
}

/** A handler name only this suite registers. */
export const SUITE_HANDLER = 'delivery-kinds-suite';

/** A signing secret of 24 bytes, the least a webhook accepts. */
export const SUITE_SECRET = `whsec_${btoa('k'.repeat(24))}`;

/** Registers SUITE_HANDLER, recording each call in `sends` and the op it was told. */
function registered(sends: unknown[], ops: string[] = []): () => void {
  handlers[SUITE_HANDLER] = async (record, context) => {
    sends.push(record);
    ops.push(context.op);
  };
  return () => {
    delete handlers[SUITE_HANDLER];
  };
}

const noNetwork: HttpFetch = () => Promise.reject(new Error('no network in this test'));

export const kindFakes = {
  webhook: {
    deliver: {
      type: 'webhook',
      url: 'https://receiver.test/hooks',
      secret: SUITE_SECRET,
      batch: 5,
    },
    batch: 5,
    queueHandler: 'p',
    destination() {
      const sends: unknown[] = [];
      const ops: string[] = [];
      return {
        env: {} as Env,
        fetcher: async (request) => {
          sends.push(request);
          const body = (await request.json()) as { op: string } | { op: string }[];
          for (const envelope of Array.isArray(body) ? body : [body]) ops.push(envelope.op);
          return new Response(null, { status: 204 });
        },
        sends,
        ops,
        close: () => {},
      };
    },
  },
  queue: {
    deliver: { type: 'queue', binding: 'SUITE_QUEUE', name: SUITE_HANDLER, batch: 5 },
    batch: 5,
    queueHandler: SUITE_HANDLER,
    destination() {
      const sends: unknown[] = [];
      const ops: string[] = [];
      const producer = {
        sendBatch: async (messages: Iterable<{ body: { op: string } }>) => {
          const batch = [...messages];
          sends.push(batch);
          for (const message of batch) ops.push(message.body.op);
        },
      };
      return {
        env: { SUITE_QUEUE: producer } as unknown as Env,
        fetcher: noNetwork,
        sends,
        ops,
        close: registered([]),
      };
    },
  },
  handler: {
    deliver: { type: 'handler', name: SUITE_HANDLER },
    batch: 1,
    queueHandler: SUITE_HANDLER,
    destination() {
      const sends: unknown[] = [];
      const ops: string[] = [];
      return { env: {} as Env, fetcher: noNetwork, sends, ops, close: registered(sends, ops) };
    },
  },
} satisfies Record<DeliverType, KindFake>;
