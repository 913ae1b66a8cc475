import { spawn, spawnSync } from 'node:child_process';
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/** bin/tidemark.ts: the CLI's core wired to this process (argv, env, fetch, files, stdin). */
const BIN = resolve('bin/tidemark.ts');
const TOKEN = 'bin-test-token-5d1c';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

const closers: (() => void)[] = [];
const folders: string[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An empty folder of fleet files, removed after the test. */
function fleetFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidemark-fleet-'));
  folders.push(dir);
  return dir;
}

/** A stand-in Worker on a free port: records each request, answers from `answer` (and its headers). */
async function fakeWorker(
  answer: (seen: Seen) => [number, unknown] | [number, unknown, Record<string, string>],
) {
  const seen: Seen[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const entry = {
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        body,
      };
      seen.push(entry);
      const [status, reply, headers = {}] = answer(entry);
      response.writeHead(status, { 'content-type': 'application/json', ...headers });
      response.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  closers.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** Runs the bin as a process, stdin piped from `input`. */
function tidemark(args: string[], env: Record<string, string>, input = '') {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

// Each case starts Node (and the first, npm): seconds on a busy machine.
describe('npx tidemark: the Node bin', { timeout: 30_000 }, () => {
  it('is the package’s bin: npx tidemark --help runs it from the repository', () => {
    const run = spawnSync('npx', ['--no-install', 'tidemark', '--help'], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('usage: npx tidemark <command>');
  });

  it('secrets set sends what stdin holds, less its trailing newline, and prints neither it nor the token', async () => {
    const worker = await fakeWorker(() => [
      201,
      { name: 'TOKEN', set_at: '2026-01-01T00:00:00.000Z', replaced: false },
    ]);
    const value = 'piped-secret-value-77aa';
    const run = await tidemark(
      ['secrets', 'set', 'acme', 'TOKEN'],
      { TIDEMARK_URL: worker.url, TIDEMARK_TOKEN: TOKEN },
      `${value}\n`,
    );
    expect(run.code).toBe(0);
    expect(worker.seen).toEqual([
      {
        method: 'PUT',
        url: '/pollers/acme/secrets/TOKEN',
        authorization: `Bearer ${TOKEN}`,
        body: JSON.stringify({ value }),
      },
    ]);
    expect(run.stdout).toBe('set acme/TOKEN at 2026-01-01T00:00:00.000Z\n');
    expect(`${run.stdout}${run.stderr}`).not.toMatch(new RegExp(`${value}|${TOKEN}`));
  });

  it('secrets set does not follow a redirect: the value stays home, and the error names the Location', async () => {
    const elsewhere = await fakeWorker(() => [
      201,
      { name: 'TOKEN', set_at: 'x', replaced: false },
    ]);
    const target = `${elsewhere.url}/collect`;
    const worker = await fakeWorker(() => [307, { moved: true }, { location: target }]);
    const value = 'redirected-secret-value-31cd';
    const run = await tidemark(
      ['secrets', 'set', 'acme', 'TOKEN'],
      { TIDEMARK_URL: worker.url, TIDEMARK_TOKEN: TOKEN },
      value,
    );
    expect(elsewhere.seen).toEqual([]);
    expect(worker.seen).toHaveLength(1);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`HTTP 307 redirect to ${target}, not followed`);
    expect(`${run.stdout}${run.stderr}`).not.toMatch(new RegExp(`${value}|${TOKEN}`));
  });

  it('apply reads the folder from disk, and exits 2 on a plan with changes', async () => {
    const worker = await fakeWorker(() => [200, { items: [], next_cursor: null }]);
    const dir = fleetFolder();
    writeFileSync(join(dir, 'acme.toml'), 'every = "60s"\n');
    const run = await tidemark(['apply', dir], { TIDEMARK_URL: worker.url, TIDEMARK_TOKEN: TOKEN });
    expect(run.stdout).toContain(`+ create    acme  (${dir}/acme.toml)`);
    expect(run.code).toBe(2);
    expect(worker.seen.map((request) => request.method)).toEqual(['GET']);
  });

  it('apply follows a link to a config: a linked poller is in the folder, never a stray', async () => {
    const worker = await fakeWorker(() => [200, { items: [], next_cursor: null }]);
    const dir = fleetFolder();
    const elsewhere = fleetFolder();
    writeFileSync(join(elsewhere, 'shared.toml'), 'every = "60s"\n');
    symlinkSync(join(elsewhere, 'shared.toml'), join(dir, 'acme.toml'));
    const run = await tidemark(['apply', dir], { TIDEMARK_URL: worker.url, TIDEMARK_TOKEN: TOKEN });
    expect(run.stdout).toContain(`+ create    acme  (${dir}/acme.toml)`);
    expect(run.code).toBe(2);
  });

  it('apply of a folder with a bad file exits 1 naming it, before any request', async () => {
    const worker = await fakeWorker(() => [500, {}]);
    const dir = fleetFolder();
    writeFileSync(join(dir, 'acme.toml'), 'every = "60s"\n');
    writeFileSync(join(dir, 'broken.toml'), 'every = "60s\n');
    const run = await tidemark(['apply', dir], { TIDEMARK_URL: worker.url, TIDEMARK_TOKEN: TOKEN });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${dir}/broken.toml:1:`);
    expect(run.stderr).toContain('Nothing was applied');
    expect(worker.seen).toEqual([]);
  });

  it('exits 1 naming the missing variable', async () => {
    const run = await tidemark(['pollers', 'list'], {});
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('TIDEMARK_URL is not set');
  });
});

describe('src/cli: the core', () => {
  it('imports nothing from Node, so that it runs anywhere (workerd in the tests)', () => {
    const files = readdirSync('src/cli', { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.ts'),
    );
    expect(files).toContain('index.ts');
    const nodeImports = files.filter((file) =>
      /from '(node:|fs|path|process|child_process)/.test(
        readFileSync(join('src/cli', file), 'utf8'),
      ),
    );
    expect(nodeImports).toEqual([]);
  });
});
