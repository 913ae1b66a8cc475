import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';

/**
 * The stop logic of `npm start` (scripts/process-group.ts), with real processes:
 * test/support/fake-start.ts supervises fake-dev.ts, which starts a grandchild, as start.ts
 * supervises wrangler, which starts workerd. Every one of them holds fd 3, a pipe from this
 * test, so the pipe's end means the whole tree is gone: no polling, no sleeps.
 */
const FAKE_START = resolve('test/support/fake-start.ts');

interface Tree {
  /** The process the test started: fake-start itself, or the shell around it. */
  top: ChildProcess;
  /** Resolves when no process of the tree holds fd 3 any more. */
  gone: Promise<void>;
}

/** `npm start` as npm runs it (`sh -c <script>`), with fake-start.ts in place of start.ts. */
function npmStartScript(): string {
  const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as {
    scripts: Record<string, string>;
  };
  return (scripts.start ?? '').replace('scripts/start.ts', `"${FAKE_START}"`);
}

async function startTree(
  options: { viaShell?: boolean; viaNpmScript?: boolean; leave?: boolean } = {},
): Promise<Tree> {
  const args = [FAKE_START, ...(options.leave ? ['--leave'] : [])];
  const stdio: StdioOptions = ['ignore', 'inherit', 'inherit', 'pipe'];
  const path = `${resolve('node_modules/.bin')}${delimiter}${process.env.PATH}`;
  // `; exit $?` keeps sh from exec-ing node: a shell stays in between.
  const shell = `"${process.execPath}" ${args.map((arg) => `"${arg}"`).join(' ')}; exit $?`;
  const top = options.viaNpmScript
    ? spawn('sh', ['-c', npmStartScript()], { stdio, env: { ...process.env, PATH: path } })
    : options.viaShell
      ? spawn('sh', ['-c', shell], { stdio })
      : spawn(process.execPath, args, { stdio });
  const tree = top.stdio[3] as Readable;
  const gone = once(tree, 'end').then(() => undefined);
  tree.resume();
  const [ready] = (await once(tree, 'data')) as [Buffer];
  expect(ready.toString()).toBe('ready\n');
  return { top, gone };
}

describe('npm start stops everything it started', () => {
  it('when the process that started it dies (npm killed), with a shell in between', async () => {
    const { top, gone } = await startTree({ viaShell: true });
    top.kill('SIGTERM');
    await gone;
  }, 20_000);

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`when npm forwards ${signal} to the shell it runs the start script in`, async () => {
      const { top, gone } = await startTree({ viaNpmScript: true });
      top.kill(signal);
      await gone;
    }, 20_000);
  }

  it('on SIGTERM, and exits 0', async () => {
    const { top, gone } = await startTree();
    const exited = once(top, 'exit');
    top.kill('SIGTERM');
    await gone;
    expect(await exited).toEqual([0, null]);
  }, 20_000);

  it('on SIGINT', async () => {
    const { top, gone } = await startTree();
    top.kill('SIGINT');
    await gone;
  }, 20_000);

  it('when it is killed outright (SIGKILL): the guard stops the group', async () => {
    const { top, gone } = await startTree();
    top.kill('SIGKILL');
    await gone;
  }, 20_000);

  it('when wrangler exits by itself: what it left behind is stopped, with its exit code', async () => {
    const { top, gone } = await startTree({ leave: true });
    const [code] = await once(top, 'exit');
    await gone;
    expect(code).toBe(3);
  }, 20_000);
});
