import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse } from 'smol-toml';
import { afterAll, describe, expect, it, vi } from 'vitest';
import guide from '../../docs/your-api.md?raw';
import { fillDevVars, LOCAL_FLEET_POLICY } from '../../scripts/dev-vars.ts';
import { readFleetPolicy } from '../../src/config/fleet-policy.ts';
import { loadPoller } from '../../src/config/load.ts';
import { checkRuntimePut } from '../../src/config/runtime-poller.ts';
import { createDeliverer } from '../../src/delivery/index.ts';
import { DEFAULT_BACKOFF, MISCONFIGURED_RETRY } from '../../src/engine/backoff.ts';
import { idempotencyKey } from '../../src/engine/idempotency.ts';
import type { DeliveryItem, RunOutcome } from '../../src/engine/ports.ts';
import { retryingWarning } from '../../src/poller/health.ts';
import { codeBlocks, shellCommands } from '../support/markdown-code.ts';
import { markdownSection, tableRows } from '../support/markdown-table.ts';
import { SPAWNS_PROCESSES } from '../support/spawned.ts';

/**
 * docs/your-api.md, "Poll your own API", as a new user follows it: every command of its
 * ```sh blocks is run as written where it runs offline (check-config, the CLI against a
 * stand-in Worker, the Node receiver, the reset), or checked against what it names where it
 * needs a running Worker (npm start); both receiver snippets are run against deliveries
 * signed by tidemark's own webhook deliverer. The code comes from the page itself.
 */

const ROOT = process.cwd();
const BIN = resolve('bin/tidemark.ts');
const WRANGLER = resolve('node_modules/wrangler/bin/wrangler.js');
const TOKEN = 'guide-admin-token-7e21';
const SECRET = `whsec_${btoa('guide-signing-secret-32-bytes!!!')}`;
const OTHER_SECRET = `whsec_${btoa('not-the-receivers-secret-32bytes')}`;

/** The one code block of `lang` whose first line is `first`. */
function block(lang: string, first: string): string {
  const found = codeBlocks(guide).filter(
    (code) => code.lang === lang && code.text.split('\n')[0]?.startsWith(first),
  );
  if (found.length !== 1) throw new Error(`${found.length} ${lang} blocks open with "${first}"`);
  return found[0]?.text ?? '';
}

const STATIC_BLOCK = block('toml', '[vars.POLLERS.orders]');
const FILE_BLOCK = block('toml', '# pollers/orders.toml');
const FILE_PATH = FILE_BLOCK.split('\n')[0]?.replace(/^# /, '') ?? '';
const NODE_RECEIVER = block('js', '// receiver.mjs');
const FETCH_HANDLER = block('js', '// handler.js');
const POLICY_LINE = block('', 'FLEET_POLICY=');

/** The static poller's table, as wrangler reads it from wrangler.toml. */
const staticOrders = (parse(STATIC_BLOCK) as { vars: { POLLERS: { orders: PollerTable } } }).vars
  .POLLERS.orders;
type PollerTable = Record<string, unknown> & { deliver: Record<string, unknown> };

const scratchDirs: string[] = [];
afterAll(() => {
  for (const dir of scratchDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh folder standing for the user's checkout: the files given, and `node_modules` (a
 * link to this one's) when a snippet imports a package.
 */
function checkout(files: Record<string, string>, options: { modules?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidemark-guide-'));
  scratchDirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  if (options.modules) symlinkSync(resolve('node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** .dev.vars as npm start writes it, with the lines the guide adds. */
function devVars(...lines: string[]): string {
  const made = fillDevVars(readFileSync('.dev.vars.example', 'utf8'));
  return `${made}${made.endsWith('\n') ? '' : '\n'}${lines.map((line) => `${line}\n`).join('')}`;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end: its exit code and what it printed. */
function run(file: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  return new Promise<Ran>((done, fail) => {
    const child = spawn(file, args, { cwd, env: { PATH: process.env.PATH ?? '', ...env } });
    const ran = collect(child);
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout: ran.stdout(), stderr: ran.stderr() }));
  });
}

function collect(child: ChildProcess) {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return { stdout: () => stdout, stderr: () => stderr };
}

/** A command's words; the guide's commands hold no quotes, so spaces split them. */
function words(command: string): string[] {
  if (/["'`$]/.test(command)) throw new Error(`a command this test cannot split: ${command}`);
  return command.split(/\s+/);
}

const scripts = (
  JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
).scripts;

/**
 * What `npm start` / `npm run NAME -- ARGS` runs: package.json's script must be `node
 * scripts/<file>.ts` (an npm script renamed or moved fails here), and the arguments after `--`.
 */
function npmScript(command: string): { file: string; args: string[] } {
  const [npm, verb, ...rest] = words(command);
  expect(npm).toBe('npm');
  const name = verb === 'run' ? rest.shift() : verb;
  const script = scripts[name ?? ''] ?? '';
  const file = /^(?:exec )?node (scripts\/[\w-]+\.ts)$/.exec(script)?.[1];
  expect(file, `package.json's "${name}" script: ${script}`).toBeDefined();
  expect(existsSync(resolve(file ?? '')), `${file} exists`).toBe(true);
  const dashes = rest.indexOf('--');
  expect(dashes === -1 ? rest : rest.slice(0, dashes), 'words npm would not pass on').toEqual([]);
  return { file: resolve(file ?? ''), args: dashes === -1 ? [] : rest.slice(dashes + 1) };
}

/** Runs `npm run …` as npm would: its script's file with node, in `cwd`. */
function runNpm(command: string, cwd: string): Promise<Ran> {
  const { file, args } = npmScript(command);
  return run(process.execPath, [file, ...args], cwd);
}

/** A Worker's address, for the CLI: it keeps each request and answers what the CLI expects. */
async function standInWorker() {
  const seen: { method: string; path: string; body: unknown }[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let text = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    request.on('end', () => {
      const path = request.url ?? '';
      seen.push({ method: request.method ?? '', path, body: text ? JSON.parse(text) : null });
      const [status, body] = ANSWERS[`${request.method} ${path.replace(/\?.*$/, '')}`] ?? [
        404,
        { error: 'not found' },
      ];
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => server.close() };
}

const PREVIEW = {
  requests: [
    {
      method: 'GET',
      url: 'http://127.0.0.1:4000/v1/orders?updated_since=2026-11-30T10%3A00%3A00.000Z',
      status: 200,
      ms: 12,
      bytes: 512,
    },
  ],
  records: [
    {
      id: '1001',
      updated_at: '2026-11-30T10:05:00.000Z',
      version: '2026-11-30T10:05:00.000Z',
      delete: false,
      record: { id: 1001, updated_at: '2026-11-30T10:05:00.000Z' },
    },
  ],
  window: { from: '2026-11-30T10:00:00.000Z', to: '2026-12-01T10:00:00.000Z', bounded: false },
  pages: 1,
  complete: true,
  checkpoint: {
    from: '2026-11-30T10:00:00.000Z',
    from_source: 'default',
    would_commit: '2026-12-01T09:59:55.000Z',
    note: 'the window read to its end',
  },
  warnings: [],
};

const ANSWERS: Record<string, [number, unknown]> = {
  'POST /pollers/preview': [200, PREVIEW],
  'POST /pollers/orders/preview': [200, PREVIEW],
  'GET /status/orders': [
    200,
    {
      name: 'orders',
      state: 'warning',
      checkpoint: '2026-12-01T10:00:00.000Z',
      lag_seconds: 7,
      last_run: { outcome: 'partial', finished_at: '2026-12-01T10:00:07.000Z' },
      warnings: ['3 updates retrying, oldest since 2026-12-01T09:58:00.000Z'],
      dead_letters: { count: 0 },
    },
  ],
  'GET /pollers/orders/config': [200, { kind: 'static', config: staticOrders }],
};

/**
 * Runs `npx tidemark …` as npx does (bin/tidemark.ts) in a folder holding `files`, against a
 * stand-in Worker: it must exit 0 with nothing on stderr; the requests it made come back.
 */
async function tidemark(command: string, files: Record<string, string> = {}) {
  const [npx, name, ...args] = words(command);
  expect([npx, name]).toEqual(['npx', 'tidemark']);
  const worker = await standInWorker();
  try {
    const ran = await run(process.execPath, [BIN, ...args], checkout(files), {
      TIDEMARK_URL: worker.url,
      TIDEMARK_TOKEN: TOKEN,
    });
    expect(ran.stderr, command).toBe('');
    expect(ran.code, command).toBe(0);
    return { ...ran, seen: worker.seen };
  } finally {
    worker.close();
  }
}

/** One update of the orders API, as a delivery carries it. */
function item(id: string): DeliveryItem {
  const version = '2026-12-01T10:00:00.000Z';
  return {
    update: { id, version, versionMs: Date.parse(version), record: { id, total: 42 } },
    op: 'upsert',
    idempotencyKey: idempotencyKey('orders', id, version),
    attempt: 1,
  };
}

/** The guide's poller's webhook deliverer: tidemark's own signing, with `secret` as WEBHOOK_SECRET. */
function deliverer(
  secret: string,
  fetcher: (request: Request) => Promise<Response>,
  deliver: Record<string, unknown> = {},
  now: () => number = Date.now,
) {
  const entry = loadPoller(
    'orders',
    { ...staticOrders, deliver: { ...staticOrders.deliver, ...deliver } },
    { ORDERS_TOKEN: 'orders-token', WEBHOOK_SECRET: secret },
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  const made = createDeliverer('orders', entry.config.deliver, {} as Env, fetcher, [], now);
  if (!made.ok) throw new Error(made.error);
  return made.deliverer;
}

/**
 * A receiver verifies what tidemark signs with the poller's deliver.secret, one update or a
 * batch, and refuses with 401 a request signed with another secret, one signed over 5
 * minutes ago and one whose body was changed after signing; only what it accepted is logged.
 */
async function expectVerifies(send: (request: Request) => Promise<Response>, logged: () => string) {
  const sent: Request[] = [];
  const fetcher = (request: Request) => {
    sent.push(request.clone());
    return send(request);
  };
  const refused = { kind: 'misconfigured', error: expect.stringContaining('HTTP 401') };
  expect(await deliverer(SECRET, fetcher).deliver([item('o-1')])).toEqual({ kind: 'delivered' });
  expect(
    await deliverer(SECRET, fetcher, { batch: 10 }).deliver([item('o-2'), item('o-3')]),
  ).toEqual({ kind: 'delivered' });
  expect(await deliverer(OTHER_SECRET, fetcher).deliver([item('o-forged')])).toEqual(refused);
  const stale = () => Date.now() - 10 * 60_000;
  expect(await deliverer(SECRET, fetcher, {}, stale).deliver([item('o-stale')])).toEqual(refused);
  const [genuine] = sent;
  if (genuine === undefined) throw new Error('nothing was sent');
  const body = (await genuine.text()).replace('"id":"o-1"', '"id":"o-tampered"');
  expect(body).toContain('o-tampered');
  const tampered = new Request(genuine.url, { method: 'POST', headers: genuine.headers, body });
  expect((await send(tampered)).status).toBe(401);
  await vi.waitFor(() => expect(logged()).toContain('upsert o-3 '), { timeout: 5_000 });
  for (const id of ['o-1', 'o-2', 'o-3']) expect(logged()).toContain(`upsert ${id} 2026-12-01`);
  for (const id of ['o-forged', 'o-stale', 'o-tampered']) expect(logged()).not.toContain(id);
}

/** A free port on this machine, for a receiver that takes its port from RECEIVER_PORT. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  await new Promise((closed) => server.close(closed));
  return port;
}

/** What running (or checking) a command gave: its output, or "checked" when it was not run. */
type Tried = Ran | 'checked';

/** Each command of the guide, and how this test runs or checks it. */
const COMMANDS: Record<string, (command: string) => Promise<Tried>> = {
  // The poller added to wrangler.toml as the guide shows it, with ORDERS_TOKEN in .dev.vars.
  'npm run check-config': async (command) => {
    const ran = await runNpm(
      command,
      checkout({
        'wrangler.toml': `${readFileSync('wrangler.toml', 'utf8')}\n${STATIC_BLOCK}\n`,
        '.dev.vars': devVars('ORDERS_TOKEN=orders-token'),
      }),
    );
    expect(ran.code, ran.stderr).toBe(0);
    return ran;
  },

  // Needs a running Worker: checked against package.json, by npmScript.
  'npm start': async (command) => {
    npmScript(command);
    return 'checked';
  },

  'npx tidemark preview orders': async (command) => {
    const ran = await tidemark(command);
    expect(ran.seen.map(({ method, path }) => `${method} ${path}`)).toEqual([
      'POST /pollers/orders/preview',
    ]);
    return ran;
  },

  'npx tidemark preview orders --from 2026-12-01T00:00:00Z --pages 5': async (command) => {
    const ran = await tidemark(command);
    expect(ran.seen).toEqual([
      {
        method: 'POST',
        path: '/pollers/orders/preview',
        body: expect.objectContaining({ from: '2026-12-01T00:00:00Z', pages: 5 }),
      },
    ]);
    return ran;
  },

  'npm run check-config -- --pollers pollers/': async (command) => {
    const ran = await runNpm(command, checkout({ [FILE_PATH]: FILE_BLOCK }));
    expect(ran.code, ran.stderr).toBe(0);
    return ran;
  },

  'npx tidemark preview pollers/orders.toml': async (command) => {
    const ran = await tidemark(command, { [FILE_PATH]: FILE_BLOCK });
    expect(ran.seen).toEqual([
      {
        method: 'POST',
        path: '/pollers/preview',
        body: expect.objectContaining({ config: parse(FILE_BLOCK) }),
      },
    ]);
    return ran;
  },

  // The Node receiver, run as the guide says: in the checkout, its secret read from .dev.vars.
  'node --env-file=.dev.vars receiver.mjs': async (command) => {
    const [node, ...args] = words(command);
    expect(node).toBe('node');
    const dir = checkout(
      { 'receiver.mjs': NODE_RECEIVER, '.dev.vars': devVars('ORDERS_TOKEN=orders-token') },
      { modules: true },
    );
    const webhookSecret = /^WEBHOOK_SECRET=(whsec_\S+)$/m.exec(
      readFileSync(join(dir, '.dev.vars'), 'utf8'),
    )?.[1];
    // The receiver verifies with the secret npm start wrote: sign with that one.
    writeFileSync(
      join(dir, '.dev.vars'),
      readFileSync(join(dir, '.dev.vars'), 'utf8').replace(webhookSecret ?? '', SECRET),
    );
    const port = await freePort();
    const child = spawn(process.execPath, args, {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', RECEIVER_PORT: String(port) },
    });
    const output = collect(child);
    try {
      const base = `http://127.0.0.1:${port}`;
      await vi.waitFor(() => expect(output.stdout()).toContain(`receiver on ${base}`), {
        timeout: 10_000,
      });
      await expectVerifies(async (request) => {
        const { pathname } = new URL(request.url);
        const body = await request.text();
        return fetch(`${base}${pathname}`, { method: 'POST', headers: request.headers, body });
      }, output.stdout);
    } finally {
      child.kill();
    }
    expect(output.stderr()).toBe('');
    return { code: 0, stdout: output.stdout(), stderr: output.stderr() };
  },

  'npx tidemark pollers get orders': async (command) => {
    const ran = await tidemark(command);
    expect(ran.seen.map(({ method, path }) => `${method} ${path}`).sort()).toEqual([
      'GET /pollers/orders/config',
      'GET /status/orders',
    ]);
    expect(ran.stdout).toContain('partial');
    return ran;
  },

  // npm start keeps its state where wrangler's default puts it; the reset deletes just that.
  'rm -rf .wrangler/state': async (command) => {
    expect(readFileSync('scripts/start.ts', 'utf8')).not.toContain('--persist-to');
    const help = await run(process.execPath, [WRANGLER, 'dev', '--help'], ROOT);
    expect(help.stdout).toMatch(/--persist-to\s.*\(defaults to \.wrangler\/state\)/);
    const dir = checkout({
      '.wrangler/state/v3/do/tidemark-Poller/poller.sqlite': 'a checkpoint',
      '.wrangler/state/v3/d1/miniflare-D1DatabaseObject/demo.sqlite': 'sessions',
      '.dev.vars': devVars(),
      'wrangler.toml': STATIC_BLOCK,
    });
    const [rm, ...args] = words(command);
    const ran = await run(rm ?? '', args, dir);
    expect(ran.code).toBe(0);
    expect(existsSync(join(dir, '.wrangler/state'))).toBe(false);
    expect(existsSync(join(dir, '.dev.vars'))).toBe(true);
    expect(existsSync(join(dir, 'wrangler.toml'))).toBe(true);
    return ran;
  },

  // The poller copied into [env.production], as a user would before a deploy.
  'npm run check-config -- --env production': async (command) => {
    const production = STATIC_BLOCK.replaceAll('[vars.POLLERS.', '[env.production.vars.POLLERS.');
    const ran = await runNpm(
      command,
      checkout({
        'wrangler.toml': [
          'name = "tidemark"',
          `main = "${resolve('src/index.ts')}"`,
          'compatibility_date = "2026-11-01"',
          '[triggers]',
          'crons = ["* * * * *"]',
          production,
        ].join('\n'),
      }),
    );
    expect(ran.code, ran.stderr).toBe(0);
    return ran;
  },
};

describe('docs/your-api.md: every command, run as the page shows it (or checked against what it names)', () => {
  const commands = shellCommands(guide);

  it('has a way to run or check each of its commands, and this test no command the page lost', () => {
    expect(commands.map(({ command }) => command).sort()).toEqual(Object.keys(COMMANDS).sort());
  });

  it.each(commands.map((command) => [command.command, command] as const))(
    '%s',
    SPAWNS_PROCESSES,
    async (_, { command, prints }) => {
      const tried = await COMMANDS[command]?.(command);
      if (tried === undefined) throw new Error(`no test runs or checks "${command}"`);
      if (tried === 'checked') {
        expect(prints, 'output promised by a command this test does not run').toEqual([]);
        return;
      }
      for (const text of prints) expect(`${tried.stdout}\n${tried.stderr}`).toContain(text);
    },
  );

  it(
    'a broken poller in wrangler.toml fails npm run check-config, naming it',
    SPAWNS_PROCESSES,
    async () => {
      const broken = STATIC_BLOCK.replace(/^from_param = .*$/m, '');
      expect(broken).not.toBe(STATIC_BLOCK);
      const ran = await runNpm(
        'npm run check-config',
        checkout({
          'wrangler.toml': `${readFileSync('wrangler.toml', 'utf8')}\n${broken}\n`,
          '.dev.vars': devVars('ORDERS_TOKEN=orders-token'),
        }),
      );
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain('poller "orders": source.from_param');
    },
  );

  it(
    'a broken poller file fails npm run check-config -- --pollers, naming its file',
    SPAWNS_PROCESSES,
    async () => {
      const broken = FILE_BLOCK.replace(/^from_param = .*$/m, '');
      expect(broken).not.toBe(FILE_BLOCK);
      const ran = await runNpm(
        'npm run check-config -- --pollers pollers/',
        checkout({ [FILE_PATH]: broken }),
      );
      expect(ran.code).toBe(1);
      expect(`${ran.stdout}${ran.stderr}`).toMatch(/orders\.toml.*source\.from_param/);
    },
  );
});

describe('docs/your-api.md: the receivers verify what tidemark signs', () => {
  it('the fetch handler accepts a delivery signed with deliver.secret and refuses a forged, stale or altered one', async () => {
    const dir = checkout(
      { 'handler.js': FETCH_HANDLER, 'package.json': '{ "type": "module" }\n' },
      { modules: true },
    );
    const module = (await import(pathToFileURL(join(dir, 'handler.js')).href)) as {
      default: { fetch(request: Request, env: Record<string, string>): Promise<Response> };
    };
    const logs: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...values: unknown[]) => {
      logs.push(values.join(' '));
    });
    try {
      await expectVerifies(
        (request) => module.default.fetch(request, { WEBHOOK_SECRET: SECRET }),
        () => logs.join('\n'),
      );
    } finally {
      log.mockRestore();
    }
  });
});

describe('docs/your-api.md: what it says agrees with the code', () => {
  it('shows the poller file as the same config as the wrangler.toml table, without enabled', () => {
    const { enabled, ...declared } = staticOrders;
    expect(enabled).toBe(false);
    expect(parse(FILE_BLOCK)).toEqual(declared);
    expect(FILE_PATH).toBe('pollers/orders.toml');
  });

  it("its FLEET_POLICY line lets the poller file be read as a runtime config, which npm start's own policy refuses", () => {
    const policy = readFleetPolicy(POLICY_LINE.replace(/^FLEET_POLICY=/, ''));
    if (!policy.ok) throw new Error(policy.error);
    const env = { ORDERS_TOKEN: 'orders-token', WEBHOOK_SECRET: SECRET };
    const file = parse(FILE_BLOCK);
    const allowed = checkRuntimePut('orders', file, env, [], policy.policy);
    expect(allowed.entry.ok ? [] : allowed.entry.errors).toEqual([]);
    expect(allowed.unset).toEqual([]);
    const local = readFleetPolicy(LOCAL_FLEET_POLICY);
    if (!local.ok) throw new Error(local.error);
    const refused = checkRuntimePut('orders', file, env, [], local.policy).entry;
    expect(refused.ok ? [] : refused.errors).toEqual(
      expect.arrayContaining([expect.stringContaining('source.url: http:// is refused')]),
    );
  });

  it('names the outcomes a run ends with, and the backoff and retrying warning as the code has them', () => {
    const section = markdownSection(guide, '## 5. Reading a run');
    const outcomes = ['success', 'partial', 'failed'] as const satisfies readonly RunOutcome[];
    expect(tableRows(section).map(([outcome]) => outcome)).toEqual(
      outcomes.map((outcome) => `\`${outcome}\``),
    );
    const flat = section.replace(/\s+/g, ' ');
    expect(flat).toContain(
      `${DEFAULT_BACKOFF.base / 1000} s, doubling up to ${DEFAULT_BACKOFF.cap / 60_000} minutes`,
    );
    expect(flat).toContain(`${MISCONFIGURED_RETRY / 60_000} minutes for a 401, 403 or 404`);
    const quoted = /"(\d+ updates retrying, oldest since [^"]+)"/.exec(flat)?.[1] ?? '';
    const [count, since] = [Number(quoted.split(' ')[0]), quoted.split(' ').at(-1) ?? ''];
    const warning = retryingWarning(
      { count, oldestSince: Date.parse(since) },
      undefined,
      Date.parse(since) + 60_000,
    );
    expect(warning?.startsWith(`${quoted}:`)).toBe(true);
  });
});
