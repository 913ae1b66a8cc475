import { env, exports } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { app } from '../../src/http/app.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

beforeEach(() => {
  installFakes();
});

const get = (path: string, token?: string) =>
  exports.default.fetch(`https://tidemark.test${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });

const ALL_SECRETS = Object.values(TEST_SECRETS);

describe('status routes', () => {
  for (const path of ['/status', '/status/seed']) {
    describe(path, () => {
      it('answers 401 without a token', async () => {
        const response = await get(path);
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toContain('Bearer');
      });

      it('answers 401 with a wrong token', async () => {
        expect((await get(path, 'not-the-token')).status).toBe(401);
        expect((await get(path, `${TEST_SECRETS.STATUS_TOKEN}x`)).status).toBe(401);
      });

      it('answers 200 with STATUS_TOKEN or ADMIN_TOKEN, and never shows a secret', async () => {
        for (const token of [TEST_SECRETS.STATUS_TOKEN, TEST_SECRETS.ADMIN_TOKEN]) {
          const response = await get(path, token);
          expect(response.status).toBe(200);
          const text = await response.text();
          for (const secret of ALL_SECRETS) expect(text).not.toContain(secret);
        }
      });

      it('answers 503 and says how to set a token when neither secret is configured', async () => {
        const closed = { ...env, STATUS_TOKEN: undefined, ADMIN_TOKEN: undefined };
        const response = await app.request(
          path,
          { headers: { authorization: 'Bearer anything' } },
          closed,
        );
        expect(response.status).toBe(503);
        const body = (await response.json()) as { error: string };
        expect(body.error).toContain('wrangler secret put STATUS_TOKEN');
      });
    });
  }

  it('lists every poller with its state, including config errors', async () => {
    const response = await get('/status', TEST_SECRETS.STATUS_TOKEN);
    const body = (await response.json()) as {
      pollers: { name: string; config_errors: string[] }[];
    };
    const names = body.pollers.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(['seed', 'broken', 'demo_sessions']));
    expect(body.pollers.find((p) => p.name === 'broken')?.config_errors[0]).toContain('lease_ttl');
    expect(body.pollers.find((p) => p.name === 'seed')?.config_errors).toEqual([]);
  });

  it('answers 404 for a poller that is not configured', async () => {
    expect((await get('/status/nope', TEST_SECRETS.STATUS_TOKEN)).status).toBe(404);
  });

  it('shows checkpoint, lag, lease, last run, next alarm and counters after a failed run, without secrets', async () => {
    const { upstream } = installFakes();
    const poller = newPoller('seed');
    upstream.respondOnce(
      (request) =>
        new Response(`token was ${request.headers.get('authorization')}`, { status: 500 }),
    );
    await poller.tick();
    const status = await poller.status();
    expect(status.checkpoint).not.toBeNull(); // the first run's T, kept although it failed
    expect(status).toMatchObject({
      name: 'seed',
      state: 'failing',
      lease: { held: false, epoch: 1 },
      last_run: { outcome: 'failed', pages: 1, records: 0 },
      counters: { runs: 1, failures: 1, successes: 0 },
    });
    expect(status.next_alarm_at).not.toBeNull();
    expect(status.last_run?.error).toContain('Bearer ***');
    const text = JSON.stringify(status);
    for (const secret of ALL_SECRETS) expect(text).not.toContain(secret);
  });
});
