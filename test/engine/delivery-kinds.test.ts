import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { DeliverConfig } from '../../src/config/schema.ts';
import { createDeliverer, type Sender } from '../../src/delivery/index.ts';
import { type DeliverType, deliveryKinds, kindOf } from '../../src/delivery/kinds/index.ts';
import { planDelivery } from '../../src/engine/delivery-plan.ts';
import type { DeliveryItem, RunContext, Update } from '../../src/engine/ports.ts';
import { type KindFake, kindFakes } from '../support/delivery-kinds.ts';

/**
 * One case suite, run against every delivery kind of src/delivery/kinds: the deliverer
 * createDeliverer builds for it, sending to a fake destination (test/support/delivery-kinds.ts).
 */

/** The poller's `deliver`, parsed as the config loader parses it. */
function tableOf(fake: KindFake): DeliverConfig {
  const entry = loadPoller(
    'p',
    {
      cron: '* * * * *',
      source: { url: 'https://api.example.com/v1/items', from_param: 'since' },
      deliver: fake.deliver,
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry.config.deliver;
}

/** A deliverer of the kind, its destination, and the sender's checks counted. */
function build(fake: KindFake, alive: () => boolean = () => true) {
  const config = tableOf(fake);
  const destination = fake.destination();
  let checks = 0;
  const sender: Sender = {
    incarnation: 7,
    check: () => {
      checks += 1;
      if (!alive()) throw new Error('this incarnation has ended');
    },
  };
  const made = createDeliverer(
    'p',
    config,
    destination.env,
    destination.fetcher,
    [],
    () => 0,
    sender,
  );
  if (!made.ok) {
    destination.close();
    throw new Error(made.error);
  }
  return { config, deliverer: made.deliverer, destination, checks: () => checks };
}

function update(i: number): Update {
  const version = new Date(Date.UTC(2026, 5, 1, 0, 0, i)).toISOString();
  return { id: `r${i}`, version, versionMs: Date.parse(version), record: { id: `r${i}` } };
}

function items(n: number): DeliveryItem[] {
  return Array.from({ length: n }, (_, i) => ({
    update: update(i),
    op: 'upsert',
    idempotencyKey: `p:r${i}`,
    attempt: 1,
  }));
}

it('every delivery kind has a fake destination, and every fake a kind', () => {
  expect(Object.keys(kindFakes).sort()).toEqual(Object.keys(deliveryKinds).sort());
});

for (const type of Object.keys(deliveryKinds) as DeliverType[]) {
  const fake: KindFake = kindFakes[type];

  describe(`${type} delivery`, () => {
    it('takes as many records per send as its kind says, and delivers them in one send', async () => {
      const { config, deliverer, destination } = build(fake);
      try {
        expect(kindOf(config).batchSize(config)).toBe(fake.batch);
        expect(deliverer.batch).toBe(fake.batch);
        expect(await deliverer.deliver(items(fake.batch))).toEqual({ kind: 'delivered' });
        expect(destination.sends).toHaveLength(1);
      } finally {
        destination.close();
      }
    });

    it("is batched by the engine as its kind says, whatever the table's name", () => {
      const { config, deliverer, destination } = build(fake);
      destination.close();
      const ctx = { config: { deliver: config }, deliverer } as unknown as RunContext;
      const plan = planDelivery(
        ctx,
        Array.from({ length: 12 }, (_, i) => update(i)),
      );
      expect(plan.requests).toBe(Math.ceil(12 / fake.batch));
    });

    it('checks its sender right before every send, and sends nothing once the life ended (R14)', async () => {
      let alive = true;
      const { deliverer, destination, checks } = build(fake, () => alive);
      try {
        await deliverer.deliver(items(fake.batch));
        expect(checks()).toBe(destination.sends.length);
        alive = false;
        const after = await deliverer.deliver(items(fake.batch));
        expect(after.kind).not.toBe('delivered');
        expect(destination.sends).toHaveLength(1);
      } finally {
        destination.close();
      }
    });

    it('tells the receiver which records are deletes and which upserts (R15)', async () => {
      const { deliverer, destination } = build(fake);
      try {
        const sent = items(2).map(
          (item, i) => ({ ...item, op: i === 1 ? 'delete' : 'upsert' }) as const,
        );
        for (const item of sent) await deliverer.deliver([item]);
        expect(destination.ops).toEqual(['upsert', 'delete']);
      } finally {
        destination.close();
      }
    });

    it('names the handler the queue consumer runs for its poller', () => {
      const config = tableOf(fake);
      expect(kindOf(config).queueHandler(config, 'p')).toBe(fake.queueHandler);
    });
  });
}

describe('queue delivery', () => {
  it("carries the sender's incarnation in every message", async () => {
    const { deliverer, destination } = build(kindFakes.queue);
    try {
      await deliverer.deliver(items(2));
      const [messages] = destination.sends as { body: { incarnation?: number } }[][];
      expect(messages?.map((message) => message.body.incarnation)).toEqual([7, 7]);
    } finally {
      destination.close();
    }
  });
});
