import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import type { Poller } from '../../src/poller/durable-object.ts';
import { registryOf } from '../../src/registry/registry.ts';
import { watchdog } from '../../src/watchdog/index.ts';
import { api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { installFakes } from './fakes.ts';

const MINUTE = 60_000;
const LIVES = 50;

describe('one name deleted and created again, over and over, while it runs (R14)', () => {
  it('delivers the last incarnation everything, nothing of a deleted one after its DELETE, and the registry and the object agree', {
    timeout: 120_000,
  }, async () => {
    const name = unique('churn');
    // Each incarnation delivers to its own path; a delivery is noted with whether its
    // incarnation's DELETE had answered when the request left the object.
    const deleted = new Set<number>();
    const deliveries: { life: number; id: string; afterDelete: boolean }[] = [];
    const receiver = {
      async handle(request: Request) {
        const life = Number(new URL(request.url).pathname.split('/').at(-1));
        const afterDelete = deleted.has(life);
        const body = JSON.parse(await request.text()) as { id: string } | { id: string }[];
        for (const envelope of Array.isArray(body) ? body : [body]) {
          deliveries.push({ life, id: envelope.id, afterDelete });
        }
        // A receiver that takes a moment: runs are still going when their DELETE comes.
        await new Promise((resolve) => setTimeout(resolve, 3));
        return new Response(null, { status: 204 });
      },
    };
    const { upstream } = installFakes({ 'receiver.test': receiver });
    const ids = Array.from({ length: 12 }, (_, i) => `u${i}`);
    for (const [i, id] of ids.entries()) upstream.add(id, Date.now() - (i + 1) * 4 * MINUTE);
    const base = runtimeConfig({ every: '1s' });
    const configOf = (life: number) => ({
      ...base,
      // Two records a page: a run is several requests, each a chance for the DELETE to land.
      source: { ...base.source, params: { per_page: '2' } },
      start_from: new Date(Date.now() - 2 * 60 * MINUTE).toISOString(),
      deliver: {
        type: 'webhook',
        url: `https://receiver.test/hooks/${life}`,
        secret: '${WEBHOOK_SECRET}',
      },
    });

    const background: Promise<unknown>[] = [];
    for (let life = 1; life <= LIVES; life += 1) {
      expect((await api('PUT', `/pollers/${name}`, configOf(life))).status).toBe(201);
      // Runs, nudges and watchdog ticks, going on while the name is deleted under them.
      background.push(
        objectOf(name).runNow(),
        api('POST', `/pollers/${name}/nudge`),
        watchdog(env),
      );
      await new Promise((resolve) => setTimeout(resolve, life % 7));
      expect((await api('DELETE', `/pollers/${name}`)).status).toBe(200);
      deleted.add(life);
    }
    const last = LIVES + 1;
    expect((await api('PUT', `/pollers/${name}`, configOf(last))).status).toBe(201);
    await Promise.allSettled(background);
    const run = await objectOf(name).runNow();
    if (run.outcome === 'ran') expect(run.run.outcome).toBe('success');
    // Skipped, a run its own alarm started holds the lease: the last life's records come with
    // it (or the next tick's), under load a moment later.
    const lastLifeIds = () => new Set(deliveries.filter((d) => d.life === last).map((d) => d.id));
    await vi.waitUntil(() => lastLifeIds().size === ids.length, { timeout: 10_000, interval: 20 });

    expect(deliveries.filter((delivery) => delivery.afterDelete)).toEqual([]);
    const lastLife = new Set(deliveries.filter((d) => d.life === last).map((d) => d.id));
    expect([...lastLife].sort()).toEqual([...ids].sort());

    const entry = await registryOf(env).get(name);
    expect(entry?.phase).toBe('active');
    const object = await runInDurableObject(objectOf(name), (_instance: Poller, state) =>
      Object.fromEntries(
        state.storage.sql
          .exec<{ key: string; value: string }>(
            "SELECT key, value FROM meta WHERE key IN ('incarnation', 'config_version')",
          )
          .toArray()
          .map((row) => [row.key, Number(row.value)]),
      ),
    );
    expect(object).toEqual({ incarnation: entry?.incarnation, config_version: entry?.version });
    const report = await watchdog(env);
    expect(report.failed).not.toContain(name);
    await api('DELETE', `/pollers/${name}`);
  });
});
