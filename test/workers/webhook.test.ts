import { Webhook } from 'standardwebhooks';
import { beforeEach, describe, expect, it } from 'vitest';
import { signWebhook } from '../../src/delivery/standard-webhooks.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

describe('webhook delivery (Standard Webhooks)', () => {
  it('matches the test vector of the Standard Webhooks spec', async () => {
    const signature = await signWebhook(
      SECRET,
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    // …and the reference implementation agrees.
    const reference = new Webhook(SECRET).sign(
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      new Date(1614265330 * 1000),
      '{"test": 2432232314}',
    );
    expect(signature).toBe(reference);
  });

  it('sends { poller, id, version, record } signed so that the reference verifier accepts it', async () => {
    const poller = newPoller('seed');
    await poller.setCheckpoint(Date.now() - 60_000);
    const update = upstream.add('sess_w', Date.now() - 30_000);

    await poller.tick();

    const [delivery] = receiver.deliveries;
    expect(delivery).toBeDefined();
    if (!delivery) return;
    const key = `seed:sess_w:${update.updatedAt}`;
    expect(delivery.key).toBe(key);
    expect(JSON.parse(delivery.body)).toEqual({
      poller: 'seed',
      id: 'sess_w',
      version: update.updatedAt,
      idempotency_key: key,
      record: { id: 'sess_w', updated_at: update.updatedAt, status: 'active' },
    });
    const headers = Object.fromEntries(delivery.headers.entries());
    expect(headers['webhook-id']).toBe(key);
    expect(new Webhook(SECRET).verify(delivery.body, headers)).toMatchObject({ id: 'sess_w' });
    // A tampered body does not verify.
    expect(() =>
      new Webhook(SECRET).verify(delivery.body.replace('sess_w', 'sess_z'), headers),
    ).toThrow();
  });
});
