import { env, exports } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { STATIC_INCARNATION } from '../../src/catalog.ts';
import { app } from '../../src/http/app.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const MINUTE = 60_000;
const { ADMIN_TOKEN, STATUS_TOKEN } = TEST_SECRETS;

beforeEach(() => {
  installFakes();
});

const get = (path: string, token?: string) =>
  exports.default.fetch(`https://tidemark.test${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });

interface HealthBody {
  status: string;
  unhealthy: number;
  at_fault?: string[];
  reasons?: Record<string, string[]>;
  warnings?: Record<string, string[]>;
}

const health = async (token?: string) => {
  const response = await get('/healthz', token);
  return { code: response.status, body: (await response.json()) as HealthBody };
};

describe('a poller that never runs is noticed', () => {
  it('is silent, with a reason naming its cron, once alert_after has passed since its object first saw it', async () => {
    const poller = newPoller('never_run', 'never_run'); // cron "*/7 * * * *", never triggered
    const first = await poller.status();
    expect(first.state).toBe('ok');
    expect(first.first_seen_at).not.toBeNull();
    expect((await health(STATUS_TOKEN)).body.at_fault).not.toContain('never_run');

    await poller.sql('UPDATE poller_state SET first_seen_at = ?', Date.now() - 31 * MINUTE);

    const status = await poller.status();
    expect(status.state).toBe('silent');
    expect(status.alerts).toHaveLength(1);
    expect(status.alerts[0]).toContain('no run since this poller was first seen');
    expect(status.alerts[0]).toContain('its own alarm never fired');
    expect(status.alerts[0]).toContain('cron ("*/7 * * * *")');
    const { code, body } = await health(STATUS_TOKEN);
    expect(code).toBe(503);
    expect(body.at_fault).toContain('never_run');
    expect(body.reasons?.never_run).toEqual(status.alerts);
    const panel = await (await get('/dashboard/panel', STATUS_TOKEN)).text();
    expect(panel).toContain('class="state silent"');

    // Its first run ends the silence, whatever it brings.
    await poller.tick();
    expect((await poller.status()).state).toBe('ok');
    expect((await health(STATUS_TOKEN)).body.at_fault).not.toContain('never_run');
  });

  it('is not silent while disabled', async () => {
    const poller = newPoller('disabled', 'disabled');
    await poller.status();
    await poller.sql('UPDATE poller_state SET first_seen_at = ?', Date.now() - 120 * MINUTE);
    expect((await poller.status()).state).toBe('ok');
    expect((await health(STATUS_TOKEN)).body.at_fault).not.toContain('disabled');
  });
});

describe('dead letters make a healthy poller a warning', () => {
  it('shows state "warning" with the count in status, in /healthz for a reader (not at fault) and on the dashboard', async () => {
    const poller = newPoller('warned', 'warned');
    await poller.setCheckpoint(Date.now() - MINUTE);
    expect((await poller.status()).state).toBe('ok');
    await poller.stub().queueDeadLetter(STATIC_INCARNATION, {
      key: 'warned:w1:2026-01-01T00:00:00Z',
      id: 'w1',
      version: '2026-01-01T00:00:00Z',
      record: '{"id":"w1"}',
      attempts: 3,
      at: Date.now() - 5 * MINUTE,
    });

    const status = await poller.status();
    expect(status.state).toBe('warning');
    expect(status.alerts).toEqual([]);
    expect(status.warnings[0]).toContain('1 dead letter, the oldest first failed');
    expect(status.warnings[0]).toContain('GET /pollers/warned/dead-letters');
    const { body } = await health(STATUS_TOKEN);
    expect(body.at_fault).not.toContain('warned');
    expect(body.warnings?.warned).toEqual(status.warnings);
    const panel = await (await get('/dashboard/panel', STATUS_TOKEN)).text();
    const row = panel.slice(panel.indexOf('<tr data-poller="warned">'));
    expect(row).toContain('class="state warning"');
    expect(row).toContain('1 dead letter');
  });
});

describe('/healthz tells the public only how many pollers are at fault', () => {
  it('names no poller without a read token; names them, with reasons, for STATUS_TOKEN or ADMIN_TOKEN', async () => {
    // "broken" (lease_ttl <= max_run) is always at fault in this suite.
    for (const token of [undefined, 'not-a-token']) {
      const response = await get('/healthz', token);
      expect(response.status).toBe(503);
      const text = await response.text();
      expect(JSON.parse(text)).toEqual({ status: 'not ok', unhealthy: expect.any(Number) });
      expect(text).not.toContain('broken');
    }
    for (const token of [STATUS_TOKEN, ADMIN_TOKEN]) {
      const { code, body } = await health(token);
      expect(code).toBe(503);
      expect(body.at_fault).toContain('broken');
      expect(body.unhealthy).toBe(body.at_fault?.length);
      expect(body.reasons?.broken?.[0]).toContain('lease_ttl');
    }
  });

  it('shows the reasons without a token when public_status = true', async () => {
    const response = await app.request('/healthz', {}, { ...env, public_status: true });
    expect(((await response.json()) as HealthBody).at_fault).toContain('broken');
  });
});
