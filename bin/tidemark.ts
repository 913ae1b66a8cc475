#!/usr/bin/env node
/**
 * `npx tidemark …`: the CLI's core (src/cli/) wired to this process: its arguments and
 * environment, the global fetch, the file system and stdin. Run by Node 22.18+ as it is
 * (Node strips the types), like scripts/*.ts.
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../src/cli/index.ts';

// `npx tidemark pollers list | head` closes stdout early: that is the reader's choice, not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

process.exitCode = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  fetch: (url, init) => fetch(url, init),
  readFile: (path) => readFile(path, 'utf8'),
  async readDir(path) {
    const entries = await readdir(path, { withFileTypes: true });
    // A link to a config is a config: followed, or --prune would delete its poller.
    const isFile = async (entry: Dirent) =>
      entry.isFile() || (entry.isSymbolicLink() && (await stat(join(path, entry.name))).isFile());
    const kinds = await Promise.all(entries.map(isFile));
    const files = entries.filter((_, index) => kinds[index]);
    return Promise.all(
      files.map(async (entry) => ({
        name: entry.name,
        text: await readFile(join(path, entry.name), 'utf8'),
      })),
    );
  },
  async readStdin() {
    // A terminal would echo the secret as it is typed: only piped input is read.
    if (process.stdin.isTTY) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
