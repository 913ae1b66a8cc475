import { afterEach, describe, expect, it, vi } from 'vitest';
import { api, createPoller } from '../support/fleet.ts';
import { installFakes } from './fakes.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

/** The structured lines the Worker logged, parsed. */
function loggedLines(spy: { mock: { calls: unknown[][] } }): Record<string, unknown>[] {
  return spy.mock.calls.flatMap(([text]) => {
    try {
      return [JSON.parse(String(text)) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

describe('what an operator sees in the logs', () => {
  it('a deleted runtime poller leaves one admin line, with its reason', async () => {
    installFakes();
    const name = await createPoller('logged-delete', { sinceMs: 60_000 });
    const log = vi.spyOn(console, 'log');

    expect((await api('DELETE', `/pollers/${name}?reason=customer%20left`)).status).toBe(200);

    const lines = loggedLines(log).filter((line) => line.action === 'poller.deleted');
    expect(lines).toEqual([
      {
        event: 'admin',
        poller: name,
        action: 'poller.deleted',
        detail: { reason: 'customer left' },
      },
    ]);
  });
});
