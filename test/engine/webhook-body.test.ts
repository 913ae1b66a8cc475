import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { createDeliverer } from '../../src/delivery/index.ts';
import { idempotencyKey } from '../../src/engine/idempotency.ts';
import type { DeliveryItem } from '../../src/engine/ports.ts';

const SECRET = `whsec_${btoa('k'.repeat(24))}`;

/** A webhook deliverer whose requests are kept, and answered 204. */
function webhook() {
  const entry = loadPoller(
    'sessions',
    {
      cron: '*/5 * * * *',
      source: { url: 'https://api.example.com/v1/sessions', from_param: 'since' },
      deliver: { type: 'webhook', url: 'https://example.com/hooks', secret: SECRET, batch: 10 },
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  const requests: Request[] = [];
  const delivery = createDeliverer(
    'sessions',
    entry.config.deliver,
    {} as Env,
    async (request) => {
      requests.push(request);
      return new Response(null, { status: 204 });
    },
    entry.secrets,
    () => 0,
  );
  if (!delivery.ok) throw new Error(delivery.error);
  return { deliverer: delivery.deliverer, requests };
}

function item(id: string, record: unknown): DeliveryItem {
  const version = '2026-06-01T00:00:00.000Z';
  return {
    update: { id, version, versionMs: Date.parse(version), record },
    op: 'upsert',
    idempotencyKey: idempotencyKey('sessions', id, version),
    attempt: 1,
  };
}

describe('a webhook body that cannot be written as JSON', () => {
  it('is refused like a 4xx (tried alone, then a dead letter), not a failed run, and nothing is sent', async () => {
    const { deliverer, requests } = webhook();
    const cyclic: Record<string, unknown> = { id: 'loop' };
    cyclic.self = cyclic;
    const result = await deliverer.deliver([item('fine', { id: 'fine' }), item('loop', cyclic)]);
    expect(result.kind).toBe('rejected');
    expect(result.kind === 'rejected' && result.error).toMatch(
      /^the record cannot be sent as JSON/,
    );
    expect(requests).toHaveLength(0);
    expect((await deliverer.deliver([item('fine', { id: 'fine' })])).kind).toBe('delivered');
    expect(requests).toHaveLength(1);
  });
});
