import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDevVars } from '../../scripts/dev-vars.ts';

/**
 * `npm start` in a folder of its own (a copy of wrangler.toml and .dev.vars.example), with
 * test/support/fake-wrangler.ts in place of wrangler: it serves the tokens of the .dev.vars it
 * started with, as wrangler dev does. Every wait is on start's output, with a timeout.
 */
const START = resolve('scripts/start.ts');
const FAKE_WRANGLER = resolve('test/support/fake-wrangler.ts');

let started: { child: ChildProcess; folder: string } | null = null;
afterEach(async () => {
  if (started === null) return;
  const { child, folder } = started;
  started = null;
  if (child.exitCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(folder, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function startIn() {
  const folder = mkdtempSync(join(tmpdir(), 'tidemark-start-'));
  copyFileSync('wrangler.toml', join(folder, 'wrangler.toml'));
  copyFileSync('.dev.vars.example', join(folder, '.dev.vars.example'));
  const port = await freePort();
  const child = spawn(process.execPath, [START], {
    cwd: folder,
    env: { ...process.env, PORT: String(port), START_WRANGLER: FAKE_WRANGLER, DEMO_OAUTH: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started = { child, folder };
  let output = '';
  const waiters: (() => void)[] = [];
  const listen = (chunk: Buffer) => {
    output += chunk.toString();
    for (const wake of waiters.splice(0)) wake();
  };
  child.stdout?.on('data', listen);
  child.stderr?.on('data', listen);
  /** Waits until start's output matches `pattern` (from `after` on), and returns the match. */
  const until = async (pattern: RegExp, after = 0, timeout = 20_000) => {
    const deadline = Date.now() + timeout;
    for (;;) {
      const match = pattern.exec(output.slice(after));
      if (match) return match;
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`npm start never printed ${pattern}:\n${output}`);
      await new Promise<void>((wake) => {
        waiters.push(wake);
        setTimeout(wake, 1_000);
      });
    }
  };
  const base = `http://127.0.0.1:${port}`;
  const status = async (token: string) =>
    (await fetch(`${base}/status`, { headers: { authorization: `Bearer ${token}` } })).status;
  return { folder, base, until, status, length: () => output.length };
}

const EXPORT =
  /^export TIDEMARK_URL=(\S+) TIDEMARK_TOKEN=(\S+) STATUS_TOKEN=(\S+) ADMIN_TOKEN=(\S+)$/m;

describe('npm start', () => {
  it('prints one export line of the URL and tokens; restarts the Worker when .dev.vars changes, says so, and the new token works', {
    timeout: 60_000,
  }, async () => {
    const start = await startIn();
    const [, url, cli, oldStatus, admin] = await start.until(EXPORT);
    const vars = parseDevVars(readFileSync(join(start.folder, '.dev.vars'), 'utf8'));
    expect({ url, cli, status: oldStatus, admin }).toEqual({
      url: start.base,
      cli: vars.ADMIN_TOKEN,
      status: vars.STATUS_TOKEN,
      admin: vars.ADMIN_TOKEN,
    });
    expect(await start.status(oldStatus ?? '')).toBe(200);
    const path = join(start.folder, '.dev.vars');
    const mark = start.length();
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replace(/^STATUS_TOKEN=.*$/m, 'STATUS_TOKEN=a-new-status-token'));
    await start.until(/^reloaded: \.dev\.vars changed$/m, mark);
    const [, , , newStatus] = await start.until(EXPORT, mark);
    expect(newStatus).toBe('a-new-status-token');
    expect(await start.status('a-new-status-token')).toBe(200);
    expect(await start.status(oldStatus ?? '')).toBe(401);
  });

  it('restarts it when wrangler.toml changes, and keeps the last good one running when the change is broken', {
    timeout: 60_000,
  }, async () => {
    const start = await startIn();
    const [, , , token] = await start.until(EXPORT);
    const path = join(start.folder, 'wrangler.toml');
    const toml = readFileSync(path, 'utf8');
    let mark = start.length();
    writeFileSync(path, `${toml}\n# an edit\n`);
    await start.until(/^reloaded: wrangler\.toml changed$/m, mark);
    expect(await start.status(token ?? '')).toBe(200);

    mark = start.length();
    writeFileSync(path, toml.replace(/^cron = .*$/m, 'cron = 15'));
    await start.until(/^not reloaded: wrangler\.toml changed, but:$/m, mark);
    expect(await start.status(token ?? '')).toBe(200);
  });
});
