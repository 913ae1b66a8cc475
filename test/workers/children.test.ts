import { describe, expect, it } from 'vitest';
import type { PollerStatus } from '../../src/poller/status.ts';
import { api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { installFakes } from './fakes.ts';

/**
 * A tracker: issues changed since `since`, and each issue's notes by offset (`start`), two a
 * page, an empty page at the end.
 */
function tracker(notes: Record<string, string[]>) {
  const asked: string[] = [];
  const down = { at: null as string | null };
  return {
    asked,
    /** Answers 500 to the notes page `KEY@start` while set. */
    down,
    handle: async (request: Request) => {
      const url = new URL(request.url);
      if (url.pathname === '/issues') {
        return Response.json(
          Object.keys(notes).map((key) => ({ key, updated_at: '2026-11-30T10:00:00Z' })),
        );
      }
      const key = /^\/issues\/([^/]+)\/notes$/.exec(url.pathname)?.[1] ?? '';
      const start = Number(url.searchParams.get('start') ?? '0');
      asked.push(`${key}@${start}`);
      if (down.at === `${key}@${start}`) return Response.json({ error: 'down' }, { status: 500 });
      const all = (notes[key] ?? []).map((text, i) => ({ id: `n${i}`, text }));
      return Response.json({ notes: all.slice(start, start + 2) });
    },
  };
}

describe('children per parent record, in the Durable Object', () => {
  it("a run that fails inside a parent's children shows the listing in status, and the next run continues at that child page", async () => {
    const upstream = tracker({ 'ACME-1': ['a', 'b', 'c', 'd', 'e'] });
    const { receiver } = installFakes({ 'tracker.test': upstream });
    upstream.down.at = 'ACME-1@4';
    const name = unique('children');
    const put = await api('PUT', `/pollers/${name}`, {
      ...runtimeConfig(),
      start_from: '2026-11-30T00:00:00Z',
      source: {
        url: 'https://tracker.test/issues',
        from_param: 'since',
        id: 'key',
        children: {
          url: 'https://tracker.test/issues/{parent.key}/notes',
          items: 'notes',
          next: { type: 'offset', param: 'start' },
        },
      },
    });
    expect(put.status).toBeLessThan(300);
    await objectOf(name).runNow();
    const status = (await (await api('GET', `/status/${name}`)).json()) as PollerStatus;
    expect(status.children?.listing).toMatchObject({ parent: 'ACME-1', pages: 2 });
    expect(status.checkpoint).toBe('2026-11-30T00:00:00.000Z');
    expect(status.last_run?.error).toContain('children of ACME-1: page 3');
    upstream.down.at = null;
    await objectOf(name).runNow();
    // Each page once, but the one that failed: the second run starts at it.
    expect(upstream.asked).toEqual(['ACME-1@0', 'ACME-1@2', 'ACME-1@4', 'ACME-1@4', 'ACME-1@5']);
    expect(receiver.deliveries.map((delivery) => delivery.id)).toEqual(
      ['n0', 'n1', 'n2', 'n3', 'n4'].map((id) => `ACME-1/${id}`),
    );
    const bodies = receiver.requests.map(
      (request) => JSON.parse(request.body) as { parent?: string },
    );
    expect(bodies.every((body) => body.parent === 'ACME-1')).toBe(true);
    const after = (await (await api('GET', `/status/${name}`)).json()) as PollerStatus;
    expect(after.children).toEqual({ listing: null });
    expect(after.checkpoint).not.toBe('2026-11-30T00:00:00.000Z');
    expect(after.last_run).toMatchObject({ pages: 3, child_requests: 2 });
    await api('DELETE', `/pollers/${name}`);
  });
});
