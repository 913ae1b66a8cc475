import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.ts';

/** GET /pollers as the registry has it: the static poller's row an hour behind its object. */
const LISTED = {
  items: [
    {
      name: 'orders',
      kind: 'runtime',
      labels: { tier: 'gold' },
      state: 'ok',
      checkpoint: '2026-11-30T10:00:00.000Z',
      lag_seconds: 42,
      reported_at: '2026-11-30T10:00:30.000Z',
      dead_letters: 0,
    },
    {
      name: 'sessions',
      kind: 'static',
      labels: {},
      state: 'ok',
      checkpoint: '2026-11-30T09:00:00.000Z',
      lag_seconds: 3600,
      reported_at: '2026-11-30T09:00:05.000Z',
      dead_letters: 0,
    },
  ],
  next_cursor: null,
};

/** GET /status: the static poller as its object has it now. */
const STATUS = {
  now: '2026-11-30T10:01:00.000Z',
  errors: [],
  pollers: [
    {
      name: 'sessions',
      state: 'warning',
      alerts: [],
      checkpoint: '2026-11-30T10:00:55.000Z',
      lag_seconds: 5,
      dead_letters: { count: 2 },
    },
  ],
};

async function list(items: unknown[] = LISTED.items) {
  let stdout = '';
  const requests: string[] = [];
  const code = await runCli({
    argv: ['pollers', 'list'],
    env: { TIDEMARK_URL: 'https://t.test', TIDEMARK_TOKEN: 'token' },
    fetch: async (url) => {
      requests.push(new URL(url).pathname);
      const body = new URL(url).pathname === '/status' ? STATUS : { ...LISTED, items };
      return { status: 200, text: async () => JSON.stringify(body) };
    },
    readDir: async () => [],
    readFile: async () => '',
    readStdin: async () => null,
    stdout: (text) => {
      stdout += text;
    },
    stderr: () => {},
  });
  return { code, lines: stdout.trimEnd().split('\n'), requests };
}

describe('tidemark pollers list', () => {
  it("shows a static poller's live checkpoint, lag, state and dead letters, and when a runtime poller's row was reported", async () => {
    const { code, lines, requests } = await list();
    expect(code).toBe(0);
    expect(requests).toEqual(['/pollers', '/status']);
    expect(lines[0]?.split(/\s+/)).toEqual([
      'NAME',
      'KIND',
      'STATE',
      'LAG',
      'DEAD',
      'CHECKPOINT',
      'REPORTED',
      'LABELS',
    ]);
    expect(lines[1]?.split(/\s+/)).toEqual([
      'orders',
      'runtime',
      'ok',
      '42s',
      '0',
      '2026-11-30T10:00:00.000Z',
      '2026-11-30T10:00:30.000Z',
      'tier=gold',
    ]);
    expect(lines[2]?.trim().split(/\s+/)).toEqual([
      'sessions',
      'static',
      'warning',
      '5s',
      '2',
      '2026-11-30T10:00:55.000Z',
      'live',
    ]);
  });

  it('asks no status when every poller listed is a runtime one', async () => {
    const runtime = LISTED.items.filter((item) => item.kind === 'runtime');
    expect((await list(runtime)).requests).toEqual(['/pollers']);
  });
});
