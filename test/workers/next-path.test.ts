import { beforeEach, describe, expect, it } from 'vitest';
import { api, createPoller, objectOf } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeReceiver, type FakeUpstream, installFakes } from './fakes.ts';

const MINUTE = 60_000;
let upstream: FakeUpstream;
let receiver: FakeReceiver;

beforeEach(() => {
  ({ upstream, receiver } = installFakes());
});

/** A runtime poller whose cursor is read at `path` (the fake's own is at `meta.next`). */
async function pollerReading(path: string): Promise<string> {
  return createPoller('next-path', {
    sinceMs: MINUTE,
    source: { next: { type: 'cursor', param: 'cursor', path } },
  });
}

/** A page of the fake upstream: these sessions, and `meta` as given (absent: no meta at all). */
function page(ids: string[], meta?: Record<string, unknown>) {
  const at = new Date(Date.now() - 30_000).toISOString();
  const sessions = ids.map((id) => ({ id, updated_at: at }));
  upstream.respondOnce(() => Response.json(meta === undefined ? { sessions } : { sessions, meta }));
}

async function run(name: string) {
  const reply = await api('POST', `/pollers/${name}/run`);
  return (await reply.json()) as { outcome: string; run?: { outcome: string } };
}

async function status(name: string) {
  const reply = await api('GET', `/status/${name}`, undefined, {
    token: TEST_SECRETS.STATUS_TOKEN,
  });
  return (await reply.json()) as { state: string; warnings: string[] };
}

const aboutPath = (warnings: string[]) => warnings.filter((w) => w.includes('next.path'));

describe('a next-page path no page ever had', () => {
  it('is a status warning naming it, after a page with records lacked it: the upstream has meta.next, the config says meta.nxt', async () => {
    const name = await pollerReading('meta.nxt');
    page(['a', 'b'], { next: 'page-2' });

    const reply = await run(name);

    // Read as the window's last page: a success, and the silent cut the warning is about.
    expect(reply.run?.outcome).toBe('success');
    expect(receiver.ids()).toEqual(['a', 'b']);
    expect(upstream.requests).toHaveLength(1);
    const shown = await status(name);
    expect(aboutPath(shown.warnings)).toEqual([
      expect.stringContaining('source.next.path "meta.nxt" was never found in a page\'s body'),
    ]);
    expect(shown.state).toBe('warning');
    await api('DELETE', `/pollers/${name}`);
  });

  it('is not warned of once some page had it: a later page with records and no path is a last page', async () => {
    const name = await pollerReading('meta.next');
    page(['a'], { next: null }); // the path is there: "no next page"
    await run(name);
    page(['b']); // no meta at all

    expect((await run(name)).run?.outcome).toBe('success');

    expect(receiver.ids()).toEqual(['a', 'b']);
    const shown = await status(name);
    expect(aboutPath(shown.warnings)).toEqual([]);
    expect(shown.state).toBe('ok');
    await api('DELETE', `/pollers/${name}`);
  });

  it('is warned of only until a page has it', async () => {
    const name = await pollerReading('meta.next');
    page(['a']);
    await run(name);
    expect(aboutPath((await status(name)).warnings)).toHaveLength(1);
    page([], { next: null });

    await run(name);

    expect(aboutPath((await status(name)).warnings)).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });

  it('costs no row on the pages after the first that had it', async () => {
    const seeing = await pollerReading('meta.next');
    const control = await pollerReading('meta.next');
    const rows = async (name: string) => (await objectOf(name).storageStats()).rowsWritten;
    /** Rows a run of `name` writes, over empty pages with the path or without any meta. */
    const runRows = async (name: string, withPath: boolean) => {
      const before = await rows(name);
      page([], withPath ? { next: null } : undefined);
      await run(name);
      return (await rows(name)) - before;
    };
    await runRows(seeing, true); // first seen: one write
    await runRows(control, false); // an empty page says nothing of the path

    // Seen again, on every later page: the same rows as a run that never sees it.
    expect(await runRows(seeing, true)).toBe(await runRows(control, false));
    expect(await runRows(seeing, true)).toBe(await runRows(control, false));
    await api('DELETE', `/pollers/${seeing}`);
    await api('DELETE', `/pollers/${control}`);
  });
});
