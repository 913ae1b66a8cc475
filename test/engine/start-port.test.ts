import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';

describe('npm start on a busy port', () => {
  it('says the port is in use and exits 1, before printing any token', async () => {
    // Someone else's server, answering 200 like ours would.
    const other = createServer((_request, response) => response.end('not tidemark'));
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    const { port } = other.address() as AddressInfo;
    const start = spawn(process.execPath, ['scripts/start.ts'], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    start.stdout.on('data', (chunk) => {
      output += chunk;
    });
    start.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const [code] = await once(start, 'exit');
    other.close();
    expect(output).toContain(`port ${port} is already in use on 127.0.0.1`);
    expect(output).toContain(`PORT=${port + 1} npm start`);
    expect(output).not.toMatch(/token/i);
    expect(code).toBe(1);
  }, 20_000);
});
