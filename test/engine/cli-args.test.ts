import { describe, expect, it } from 'vitest';
import { asksForHelp, parseArgs } from '../../src/cli/args.ts';
import { type CliIo, runCli } from '../../src/cli/index.ts';

const spec = {
  positionals: ['poller', 'key'],
  flags: { reason: 'string', yes: 'boolean' },
} as const;

describe('the CLI reads its command line strictly', () => {
  it('takes positionals in order, and flags before, between or after them', () => {
    expect(parseArgs(['--yes', 'p', '--reason', 'gone upstream', 'k'], spec)).toEqual({
      ok: true,
      value: { args: { poller: 'p', key: 'k' }, flags: { yes: true, reason: 'gone upstream' } },
    });
    expect(parseArgs(['p', 'k', '--reason=a=b'], spec)).toMatchObject({
      value: { flags: { reason: 'a=b' } },
    });
  });

  it('refuses an unknown flag rather than ignoring it: a typo in --prune must not apply a plan without it', () => {
    expect(parseArgs(['p', 'k', '--prnue'], spec)).toEqual({
      ok: false,
      error: 'unknown option --prnue',
    });
  });

  it('says which positional is missing, and refuses one too many', () => {
    expect(parseArgs(['p'], spec)).toEqual({ ok: false, error: 'missing KEY' });
    expect(parseArgs(['p', 'k', 'x'], spec)).toEqual({
      ok: false,
      error: 'unexpected argument "x"',
    });
  });

  it('takes a forgotten value for what it is, not the next flag as the value', () => {
    expect(parseArgs(['p', 'k', '--reason', '--yes'], spec)).toMatchObject({ ok: false });
    expect(parseArgs(['p', 'k', '--reason'], spec)).toMatchObject({ ok: false });
    expect(parseArgs(['p', 'k', '--reason=--yes'], spec)).toMatchObject({
      value: { flags: { reason: '--yes' } },
    });
    expect(parseArgs(['p', 'k', '--yes=no'], spec)).toEqual({
      ok: false,
      error: '--yes takes no value',
    });
  });

  it('reads everything after -- as a positional (a dead letter key that starts with --)', () => {
    expect(parseArgs(['p', '--', '--odd-key'], spec)).toMatchObject({
      value: { args: { poller: 'p', key: '--odd-key' } },
    });
    expect(asksForHelp(['p', '--', '--help'])).toBe(false);
    expect(asksForHelp(['p', '-h'])).toBe(true);
  });
});

/** Runs the CLI with no network and no files: what it prints, and its exit code. */
async function run(argv: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const requests: string[] = [];
  const io: CliIo = {
    argv,
    env,
    fetch: async (url) => {
      requests.push(url);
      return { status: 500, text: async () => '{"error":"no network in this test"}' };
    },
    readFile: async (path) => {
      throw new Error(`ENOENT: no such file, ${path}`);
    },
    readDir: async () => [],
    readStdin: async () => null,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  };
  const code = await runCli(io);
  return { code, stdout, stderr, requests };
}

describe('tidemark: commands, help and the environment', () => {
  it('--help lists every command; a command’s --help its usage, with no environment needed', async () => {
    const all = await run(['--help']);
    expect(all.code).toBe(0);
    for (const command of ['pollers list', 'secrets set', 'dead-letters discard', 'apply DIR']) {
      expect(all.stdout).toContain(command);
    }
    const one = await run(['apply', '--help']);
    expect(one).toMatchObject({ code: 0, requests: [] });
    expect(one.stdout).toContain(
      'usage: tidemark apply DIR [--prune [--selector KEY=VALUE]] [--yes]',
    );
    expect(one.stdout).toMatch(/2 the plan has changes/);
    const group = await run(['dead-letters', '--help']);
    expect(group.stdout).toContain('dead-letters replay');
    expect(group.stdout).not.toContain('pollers list');
  });

  it('names an unknown command, and a bad option with the command’s usage (exit 1)', async () => {
    const unknown = await run(['pollers', 'frob']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('"pollers frob" is not a command');
    const bad = await run(['pollers', 'pause', 'p', '--why', 'x'], {
      TIDEMARK_URL: 'https://t.test',
      TIDEMARK_TOKEN: 't',
    });
    expect(bad).toMatchObject({ code: 1, requests: [] });
    expect(bad.stderr).toContain('unknown option --why');
    expect(bad.stderr).toContain('usage: tidemark pollers pause NAME [--reason R]');
  });

  it('refuses plain http to another machine, where the token would cross in the clear', async () => {
    const token = { TIDEMARK_TOKEN: 'sekrit-token-123' };
    const remote = await run(['pollers', 'list'], { TIDEMARK_URL: 'http://t.test', ...token });
    expect(remote).toMatchObject({ code: 1, requests: [] });
    expect(remote.stderr).toContain('TIDEMARK_URL is plain http to another machine: use https');
    for (const local of ['http://127.0.0.1:8787', 'http://localhost:8787', 'http://[::1]:8787']) {
      const answered = await run(['pollers', 'list'], { TIDEMARK_URL: local, ...token });
      expect(answered.requests, local).toEqual([`${local}/pollers?limit=500`]);
    }
  });

  it('names the cause of a request that did not get an answer (Node keeps it in cause)', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8787'), {
      code: 'ECONNREFUSED',
    });
    let stderr = '';
    const code = await runCli({
      argv: ['pollers', 'list'],
      env: { TIDEMARK_URL: 'http://127.0.0.1:8787', TIDEMARK_TOKEN: 't' },
      fetch: async () => {
        throw new TypeError('fetch failed', { cause: refused });
      },
      readFile: async (path) => {
        throw new Error(`ENOENT: no such file, ${path}`);
      },
      readDir: async () => [],
      readStdin: async () => null,
      stdout: () => {},
      stderr: (text) => {
        stderr += text;
      },
    });
    expect(code).toBe(1);
    expect(stderr).toContain('fetch failed (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:8787)');
  });

  it('says which variable is missing (exit 1), and never prints the token', async () => {
    const noUrl = await run(['pollers', 'list'], { TIDEMARK_TOKEN: 'sekrit-token-123' });
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toContain('TIDEMARK_URL is not set');
    // The address npm start serves on, ready to copy.
    expect(noUrl.stderr).toContain('export TIDEMARK_URL=http://127.0.0.1:8787');
    const noToken = await run(['pollers', 'list'], { TIDEMARK_URL: 'https://t.test' });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toContain('TIDEMARK_TOKEN is not set');
    const failed = await run(['pollers', 'list'], {
      TIDEMARK_URL: 'https://t.test/',
      TIDEMARK_TOKEN: 'sekrit-token-123',
    });
    expect(failed.code).toBe(1);
    expect(failed.requests).toEqual(['https://t.test/pollers?limit=500']);
    expect(failed.stderr).toContain('HTTP 500: no network in this test');
    expect(`${noUrl.stdout}${noUrl.stderr}${failed.stdout}${failed.stderr}`).not.toContain(
      'sekrit-token-123',
    );
  });

  it('secrets set refuses a value that is not piped in (a terminal would show it), before any request', async () => {
    const result = await run(['secrets', 'set', 'p', 'TOKEN'], {
      TIDEMARK_URL: 'https://t.test',
      TIDEMARK_TOKEN: 't',
    });
    expect(result).toMatchObject({ code: 1, requests: [] });
    expect(result.stderr).toContain('reads the value from stdin');
  });

  it('dead-letters discard needs a reason (the audit log keeps it), before any request', async () => {
    const result = await run(['dead-letters', 'discard', 'p', 'k'], {
      TIDEMARK_URL: 'https://t.test',
      TIDEMARK_TOKEN: 't',
    });
    expect(result).toMatchObject({ code: 1, requests: [] });
    expect(result.stderr).toContain('--reason is required');
  });
});
