import { env } from 'cloudflare:workers';
import { Webhook } from 'standardwebhooks';
import { beforeEach, describe, expect, it } from 'vitest';
import { signWebhook } from '../../src/delivery/standard-webhooks.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const MINUTE = 60_000;
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

describe('redirects', () => {
  it('a webhook receiver that redirects is a misconfiguration, not a delivery', async () => {
    // The receiver is reached through workerd's own fetch (test/support/network.ts): it
    // answers 302 to /final, which answers 200 to anything. Followed, the POST arrives there
    // as a GET without its body, which is why a delivery must never follow it.
    const network = { handle: (request: Request) => env.TEST_NETWORK.fetch(request) };
    ({ upstream } = installFakes({ 'receiver.test': network }));
    const followed = await env.TEST_NETWORK.fetch('https://receiver.test/hooks', {
      method: 'POST',
      body: '{"id":"sess_r"}',
    });
    expect(await followed.json()).toEqual({ method: 'GET', body: '' });

    const poller = newPoller('seed');
    const start = Date.now() - MINUTE;
    await poller.setCheckpoint(start);
    upstream.add('sess_r', Date.now() - 30_000);
    await poller.tick();

    const status = await poller.status();
    expect(status.last_run?.outcome).toBe('failed');
    expect(status.last_run?.error).toContain(
      'delivery: POST https://receiver.test/hooks: HTTP 302: the receiver redirected to https://receiver.test/final?token=***; set deliver.url to the final URL',
    );
    expect(JSON.stringify(status)).not.toContain(TEST_SECRETS.UPSTREAM_TOKEN);
    expect(status.state).toBe('misconfigured');
    expect(status.dead_letters.count).toBe(0);
    expect(await poller.checkpoint()).toBe(start);
    expect(Date.parse(status.next_alarm_at ?? '')).toBeGreaterThanOrEqual(Date.now() + 29 * MINUTE);
  });
});
