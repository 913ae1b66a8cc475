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

  it('sends { type, op, poller, id, version, idempotency_key, record } signed so that the reference verifier accepts it', async () => {
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
      type: 'record.updated',
      op: 'upsert',
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

describe('ids that are not plain ASCII', () => {
  it('gives every update a short, header-safe webhook-id that the Standard Webhooks verifier accepts, and the readable key in the body', async () => {
    const poller = newPoller('seed');
    await poller.setCheckpoint(Date.now() - MINUTE);
    const ids = ['café ☕ 会話', 'org:42', 'line\nbreak', 'x'.repeat(10_000), '100%'];
    const version = upstream.add(ids[0] ?? '', Date.now() - 30_000).updatedAt;
    for (const id of ids.slice(1)) upstream.add(id, version);
    receiver.fail('café ☕ 会話', 503, 1); // its retry must carry the same webhook-id

    await poller.tick();
    await poller.retryNow();

    expect((await poller.status()).last_run?.outcome).toBe('success');
    expect(receiver.ids().sort()).toEqual([...ids].sort());
    const key = (id: string) =>
      `seed:${id.replaceAll('%', '%25').replaceAll(':', '%3A')}:${version}`;
    const verifier = new Webhook(SECRET);
    for (const delivery of receiver.deliveries) {
      const headers = Object.fromEntries(delivery.headers.entries());
      expect(headers['webhook-id']).toMatch(/^[\x21-\x7e]{1,200}$/);
      expect(verifier.verify(delivery.body, headers)).toMatchObject({
        id: delivery.id,
        idempotency_key: key(delivery.id),
      });
    }
    const idOf = (id: string) => receiver.deliveries.find((d) => d.id === id)?.key;
    expect(idOf('org:42')).toBe(`seed:org%3A42:${version}`); // short and ASCII: the key itself
    expect(idOf('100%')).toBe(`seed:100%25:${version}`);
    expect(idOf('line\nbreak')).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(idOf('x'.repeat(10_000))).toMatch(/^msg_[0-9a-f]{32}$/);
    const cafe = receiver.requests
      .filter((request) => request.body.includes('café'))
      .map((request) => request.headers.get('webhook-id'));
    expect(cafe).toHaveLength(2);
    expect(cafe[0]).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(cafe[1]).toBe(cafe[0]);
  });
});
