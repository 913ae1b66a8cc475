import { runInDurableObject } from 'cloudflare:test';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import { api, createPoller, objectOf } from '../support/fleet.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

/** A runtime poller with `deliver` extended by `options`, and a way to run it. */
async function poller(options: Record<string, unknown>) {
  const name = await createPoller('changes', { sinceMs: 30 * MINUTE, deliver: options });
  return { name, run: () => objectOf(name).runNow() };
}

describe('deliver.changes_only', () => {
  it('does not deliver a newer version whose content is the one delivered, and counts it', async () => {
    const { name, run } = await poller({ changes_only: true, changes_ignore: ['updated_at'] });
    upstream.add('a', Date.now() - 20 * MINUTE, { fields: { title: 'first' } });
    await run();
    upstream.add('a', Date.now(), { fields: { title: 'first' } }); // after C: a new version
    const second = await run();
    upstream.add('a', Date.now() + 1, { fields: { title: 'second' } });
    await run();

    expect(second).toMatchObject({ outcome: 'ran', run: { unchanged: 1, records: 0 } });
    expect(receiver.deliveries.map((d) => JSON.parse(d.body).record.title)).toEqual([
      'first',
      'second',
    ]);
    // Handled all the same: C moved past the version it did not send.
    const status = (await (await api('GET', `/status/${name}`)).json()) as { checkpoint: string };
    expect(Date.parse(status.checkpoint)).toBeGreaterThan(Date.now() - MINUTE);
    await api('DELETE', `/pollers/${name}`);
  });

  it('delivers a version that reverts the one before it on the same page: each is compared with the one sent before it', async () => {
    const { name, run } = await poller({ changes_only: true, changes_ignore: ['updated_at'] });
    upstream.add('r', Date.now() - 20 * MINUTE, { fields: { title: 'B' } });
    await run();
    // One page: r@v2 says C, r@v3 says B again. After v2 the receiver has C: v3 is a change.
    upstream.add('r', Date.now(), { fields: { title: 'C' } });
    upstream.add('r', Date.now() + 1, { fields: { title: 'B' } });
    await run();

    expect(receiver.deliveries.map((d) => JSON.parse(d.body).record.title)).toEqual([
      'B',
      'C',
      'B',
    ]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('delivers a newer version that reverts an older one retried in front of it', async () => {
    const { name, run } = await poller({ changes_only: true, changes_ignore: ['updated_at'] });
    upstream.add('t', Date.now() - 20 * MINUTE, { fields: { title: 'B' } });
    await run();
    upstream.add('t', Date.now(), { fields: { title: 'C' } });
    receiver.fail('t', 503, 1);
    await run(); // t@v2 (C) fails: stored, retried first by the next run
    upstream.add('t', Date.now() + 1, { fields: { title: 'B' } });
    await run();

    expect(receiver.deliveries.map((d) => JSON.parse(d.body).record.title)).toEqual([
      'B',
      'C',
      'B',
    ]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('compares the whole record but the ignored paths: a new updated_at alone is a change without changes_ignore', async () => {
    const { name, run } = await poller({ changes_only: true });
    upstream.add('b', Date.now() - 20 * MINUTE, { fields: { title: 'same' } });
    await run();
    upstream.add('b', Date.now(), { fields: { title: 'same' } });
    await run();
    expect(receiver.ids()).toEqual(['b', 'b']);
    await api('DELETE', `/pollers/${name}`);
  });

  it('delivers every version when off (the default), and keeps no content', async () => {
    const { name, run } = await poller({});
    upstream.add('c', Date.now() - 20 * MINUTE, { fields: { title: 'same' } });
    await run();
    upstream.add('c', Date.now(), { fields: { title: 'same' } });
    await run();
    expect(receiver.ids()).toEqual(['c', 'c']);
    const rows = await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
      state.storage.sql.exec('SELECT id FROM id_memory').toArray(),
    );
    expect(rows).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });
});
