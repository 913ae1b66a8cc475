import { describe, expect, it } from 'vitest';
import type { PollerStatus } from '../../src/poller/status.ts';
import { api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { installFakes } from './fakes.ts';
import { newPoller } from './poller.ts';

const TOKEN = 'CPDAlvWDx70CEPDAlvWDx70CGAU';

/**
 * A sync feed: a round from source.url lists a and b and ends with TOKEN; a round from TOKEN
 * lists nothing new. `gate`, while set, holds every answer until it is opened.
 */
function syncFeed() {
  const feed = {
    asked: [] as URL[],
    gate: null as Promise<void> | null,
    handle: async (request: Request) => {
      const url = new URL(request.url);
      feed.asked.push(url);
      if (feed.gate !== null) await feed.gate;
      if (url.searchParams.get('syncToken') === null) {
        return Response.json({ items: [{ id: 'a' }, { id: 'b' }], nextSyncToken: TOKEN });
      }
      return Response.json({ items: [], nextSyncToken: TOKEN });
    },
  };
  return feed;
}

async function resumePoller(feed: ReturnType<typeof syncFeed>) {
  const { receiver } = installFakes({ 'sync.test': feed });
  const name = unique('resume-admin');
  const put = await api('PUT', `/pollers/${name}`, {
    ...runtimeConfig(),
    source: {
      url: 'https://sync.test/events',
      items: 'items',
      resume: { path: 'nextSyncToken', param: 'syncToken' },
    },
  });
  expect(put.status).toBeLessThan(300);
  return { name, receiver };
}

const status = async (name: string) =>
  (await (await api('GET', `/status/${name}`)).json()) as PollerStatus;

/** Waits for the condition, a millisecond at a time, `tries` times at most. */
async function until(condition: () => boolean, tries = 500): Promise<void> {
  for (let i = 0; i < tries && !condition(); i += 1) await new Promise((r) => setTimeout(r, 1));
  if (!condition()) throw new Error('the condition never held');
}

describe('a manual resync through the checkpoint admin route', () => {
  it('clears the token so the next round starts from source.url, audited with the reason, and sends nothing unchanged again', async () => {
    const feed = syncFeed();
    const { name, receiver } = await resumePoller(feed);
    await objectOf(name).runNow();
    expect((await status(name)).resume?.token_stored).toBe(true);

    const reply = await api('PUT', `/pollers/${name}/checkpoint`, {
      resync: true,
      reason: 'the token looks stuck',
    });
    expect(reply.status).toBe(200);
    expect(await reply.json()).toMatchObject({ outcome: 'resync', round_pages: 0 });
    const after = await status(name);
    expect(after.resume).toMatchObject({ token_stored: false, round_pages: 0 });
    expect(after.resume?.last_resync?.reason).toContain('an admin asked for a resync');
    const entry = after.audit.find((line) => line.action === 'checkpoint.resync');
    expect(entry?.detail).toMatchObject({ reason: 'the token looks stuck' });
    expect(JSON.stringify(after)).not.toContain(TOKEN);

    feed.asked.length = 0;
    await objectOf(name).runNow();
    expect(feed.asked.map((url) => url.searchParams.has('syncToken'))).toEqual([false]);
    expect(receiver.ids()).toEqual(['a', 'b']); // listed again unchanged: not sent again
    expect((await status(name)).resume?.token_stored).toBe(true);
    await api('DELETE', `/pollers/${name}`);
  });

  it('is refused while a run holds the lease, and leaves the token', async () => {
    const feed = syncFeed();
    const { name } = await resumePoller(feed);
    await objectOf(name).runNow();
    let open = () => {};
    feed.gate = new Promise((resolve) => {
      open = resolve;
    });
    feed.asked.length = 0;
    const running = objectOf(name).runNow();
    await until(() => feed.asked.length > 0);
    const reply = await api('PUT', `/pollers/${name}/checkpoint`, { resync: true, reason: 'now' });
    expect(reply.status).toBe(409);
    expect(((await reply.json()) as { error: string }).error).toContain('holds the lease');
    open();
    await running;
    const after = await status(name);
    expect(after.resume?.token_stored).toBe(true);
    expect(after.audit.some((line) => line.action === 'checkpoint.resync')).toBe(false);
    await api('DELETE', `/pollers/${name}`);
  });

  it('a time is refused for a poller with source.resume, and a resync for one without', async () => {
    const { name } = await resumePoller(syncFeed());
    const at = await api('PUT', `/pollers/${name}/checkpoint`, {
      at: new Date().toISOString(),
      reason: 'backfill',
    });
    expect(at.status).toBe(400);
    expect(((await at.json()) as { error: string }).error).toContain('"resync": true');
    const plain = unique('no-resume');
    expect((await api('PUT', `/pollers/${plain}`, runtimeConfig())).status).toBeLessThan(300);
    const resync = await api('PUT', `/pollers/${plain}/checkpoint`, { resync: true, reason: 'x' });
    expect(resync.status).toBe(400);
    expect(((await resync.json()) as { error: string }).error).toContain('source.resume');
    await api('DELETE', `/pollers/${name}`);
    await api('DELETE', `/pollers/${plain}`);
  });
});

/**
 * A feed whose tokens expire: a round from source.url lists `items` and ends with token
 * `T<generation>`; a round from a token of an older generation than `expiredBelow` is 410.
 */
function expiringFeed() {
  const feed = {
    items: ['a', 'b', 'c'],
    generation: 0,
    expiredBelow: 0,
    handle: async (request: Request) => {
      const token = new URL(request.url).searchParams.get('syncToken');
      if (token !== null && Number(token.slice(1)) < feed.expiredBelow) {
        return Response.json({ error: { code: 410 } }, { status: 410 });
      }
      feed.generation += 1;
      const items = token === null ? feed.items.map((id) => ({ id })) : [];
      return Response.json({ items, nextSyncToken: `T${feed.generation}` });
    },
  };
  return feed;
}

describe('deletes full rounds hold (resume.resync_deletes)', () => {
  it('are released by POST /pollers/:name/reconcile/confirm, and a listing is not started there', async () => {
    const feed = expiringFeed();
    const { receiver } = installFakes({ 'sync.test': feed });
    const name = unique('resume-held');
    const put = await api('PUT', `/pollers/${name}`, {
      ...runtimeConfig(),
      source: {
        url: 'https://sync.test/events',
        items: 'items',
        resume: { path: 'nextSyncToken', param: 'syncToken', resync_deletes: true },
      },
    });
    expect(put.status).toBeLessThan(300);
    await objectOf(name).runNow();
    // b and c went while the token was expired: 2 of 3 known ids, above max_deletes (10%).
    feed.items = ['a'];
    feed.expiredBelow = feed.generation + 1;
    await objectOf(name).runNow();
    const held = await status(name);
    expect(held.reconcile).toMatchObject({ every: null, held: { deletes: 2, known_ids: 3 } });
    expect(held.alerts.join(' ')).toContain('held 2 deletes');
    expect(receiver.deliveries.filter((d) => d.op === 'delete')).toEqual([]);

    const start = await api('POST', `/pollers/${name}/reconcile`);
    expect(start.status).toBe(404);
    expect(((await start.json()) as { error: string }).error).toContain('full rounds');
    const confirm = await api('POST', `/pollers/${name}/reconcile/confirm`);
    expect(confirm.status).toBe(202);
    expect(await confirm.json()).toMatchObject({ outcome: 'confirmed', deletes: 2 });
    await objectOf(name).runNow();
    await newPoller(name, name).settle();
    const deletes = receiver.deliveries.filter((d) => d.op === 'delete').map((d) => d.id);
    expect(deletes.sort()).toEqual(['b', 'c']);
    expect((await status(name)).reconcile?.held).toBeNull();
    await api('DELETE', `/pollers/${name}`);
  });
});
