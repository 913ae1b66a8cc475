import { beforeEach, describe, expect, it } from 'vitest';
import { api, createPoller } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

async function run(name: string) {
  const reply = await api('POST', `/pollers/${name}/run`);
  return (await reply.json()) as { run?: { outcome: string } };
}

async function status(name: string) {
  const reply = await api('GET', `/status/${name}`, undefined, {
    token: TEST_SECRETS.STATUS_TOKEN,
  });
  return (await reply.json()) as {
    checkpoint: string | null;
    consecutive_failures: number;
    last_run: { outcome: string; error: string | null } | null;
    next_wakeup: { reason: string } | null;
  };
}

describe('source.errors (GraphQL)', () => {
  it('a 200 page with errors fails the window and C stays, the message shown redacted', async () => {
    const name = await createPoller('graphql-errors', {
      sinceMs: 10 * MINUTE,
      source: { errors: 'errors' },
    });
    upstream.add('a', Date.now() - 5 * MINUTE);
    expect((await run(name)).run?.outcome).toBe('success');
    const committed = (await status(name)).checkpoint;
    expect(committed).not.toBeNull();
    // Partial data beside the errors: its records are not delivered either.
    const at = new Date(Date.now() - 30_000).toISOString();
    upstream.respondOnce(() =>
      Response.json({
        sessions: [{ id: 'b', updated_at: at }],
        errors: [
          {
            message: `Bearer ${TEST_SECRETS.UPSTREAM_TOKEN} cannot see field "notes"`,
            extensions: { code: 'FORBIDDEN' },
          },
        ],
      }),
    );

    expect((await run(name)).run?.outcome).toBe('failed');

    const after = await status(name);
    expect(after.checkpoint).toBe(committed);
    expect(receiver.ids()).toEqual(['a']);
    expect(after.last_run?.error).toContain('HTTP 200 but the page reports errors at "errors"');
    expect(after.last_run?.error).toContain('cannot see field \\"notes\\" (FORBIDDEN)');
    expect(after.last_run?.error).not.toContain(TEST_SECRETS.UPSTREAM_TOKEN);
    expect(after.consecutive_failures).toBe(1);
    expect(after.next_wakeup?.reason).toBe('retry');

    // The retry, once the upstream answers, delivers the rest and moves C.
    upstream.add('b', Date.now());
    expect((await run(name)).run?.outcome).toBe('success');
    expect(receiver.ids()).toEqual(['a', 'b']);
    expect((await status(name)).checkpoint).not.toBe(committed);
    await api('DELETE', `/pollers/${name}`);
  });
});
