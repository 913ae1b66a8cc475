import { runInDurableObject } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import type { Poller } from '../../src/poller/durable-object.ts';
import { TEST_SECRETS } from './pollers.ts';

/**
 * What the fleet tests share: the Worker's API with a token, a runtime poller's config for the
 * fake upstream and receiver (test/workers/fakes.ts), and a poller's object and alarm.
 */

/** A call to the Worker's API; a body that is not a string is sent as JSON. */
export function api(
  method: string,
  path: string,
  body?: unknown,
  options: { token?: string; contentType?: string } = {},
) {
  const text = body === undefined || typeof body === 'string' ? body : JSON.stringify(body);
  return exports.default.fetch(`https://tidemark.test${path}`, {
    method,
    headers: {
      authorization: `Bearer ${options.token ?? TEST_SECRETS.ADMIN_TOKEN}`,
      'content-type': options.contentType ?? 'application/json',
    },
    ...(text === undefined ? {} : { body: text }),
  });
}

/** A runtime poller of the fake upstream, ticking by itself every minute. */
export function runtimeConfig(
  overrides: Record<string, unknown> = {},
  options: { token?: string; url?: string } = {},
) {
  return {
    // A tick a day, at an offset of the name: a test that counts runs, epochs or rows is not
    // raced by the poller's own tick (at every: "60s", a 9 s test holds one about one time in
    // seven). A test about ticking by itself says so with its own `every`.
    every: '1d',
    labels: { tenant: 'acme' },
    source: {
      url: options.url ?? 'https://upstream.test/v1/sessions',
      from_param: 'date_from',
      items: 'sessions',
      headers: { Authorization: `Bearer \${${options.token ?? 'UPSTREAM_TOKEN'}}` },
      next: { type: 'cursor', param: 'cursor', path: 'next_cursor' },
    },
    deliver: { type: 'webhook', url: 'https://receiver.test/hooks', secret: '${WEBHOOK_SECRET}' },
    ...overrides,
  };
}

/** A poller name no other test uses. */
export const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`;

export const objectOf = (name: string) => env.POLLER.get(env.POLLER.idFromName(name));

export const alarmOf = (name: string) =>
  runInDurableObject(objectOf(name), (_instance: Poller, state) => state.storage.getAlarm());

/**
 * Creates a runtime poller of the fake upstream (runtimeConfig) that starts `sinceMs` ago,
 * with its `source` and `deliver` tables extended and any other top-level key set; its name.
 */
export async function createPoller(
  prefix: string,
  options: {
    sinceMs: number;
    source?: Record<string, unknown>;
    deliver?: Record<string, unknown>;
    [key: string]: unknown;
  },
): Promise<string> {
  const { sinceMs, source = {}, deliver = {}, ...rest } = options;
  const name = unique(prefix);
  const base = runtimeConfig();
  await api('PUT', `/pollers/${name}`, {
    ...base,
    ...rest,
    start_from: new Date(Date.now() - sinceMs).toISOString(),
    source: { ...base.source, ...source },
    deliver: { ...base.deliver, ...deliver },
  });
  return name;
}

/** Sets one of a poller's own secrets through the API (the body is the value). */
export async function setSecret(name: string, secret: string, value: string): Promise<void> {
  const reply = await api('PUT', `/pollers/${name}/secrets/${secret}`, value, {
    contentType: 'text/plain',
  });
  if (reply.status >= 300) throw new Error(`PUT secret ${secret}: HTTP ${reply.status}`);
}
