import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deploy, type Wrangler } from '../../scripts/deploy.ts';
import { SPAWNS_PROCESSES } from '../support/spawned.ts';
import { BROKEN_STAGING, STAGING, wranglerFixture } from '../support/wrangler-fixture.ts';

/** A wrangler that records its calls; `secret list` answers with `secrets` (or fails). */
function fakeWrangler(secrets: string[] | 'unavailable') {
  const calls: string[][] = [];
  const wrangler: Wrangler = (args) => {
    calls.push(args);
    if (args[0] !== 'secret') return { status: 0, stdout: '', stderr: '' };
    if (secrets === 'unavailable') {
      return {
        status: 1,
        stdout: '',
        stderr:
          '✘ [ERROR] In a non-interactive environment, it is necessary to set a CLOUDFLARE_API_TOKEN',
      };
    }
    const listed = secrets.map((name) => ({ name, type: 'secret_text' }));
    return { status: 0, stdout: JSON.stringify(listed), stderr: '' };
  };
  return { wrangler, calls };
}

let output: string[] = [];
beforeEach(() => {
  output = [];
  for (const method of ['log', 'warn', 'error'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      output.push(args.join(' '));
    });
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('npm run deploy', () => {
  it(
    'checks the environment it deploys: a broken [env.staging] stops `npm run deploy -- --env staging`',
    SPAWNS_PROCESSES,
    () => {
      const path = wranglerFixture(BROKEN_STAGING);
      const run = spawnSync(
        'npm',
        ['run', '-s', 'deploy', '--', '--env', 'staging', '-c', path, '--dry-run'],
        {
          encoding: 'utf8',
          env: { ...process.env, CI: 'true' },
        },
      );
      expect(run.stderr).toContain(
        'poller "orders": lease_ttl: expected a duration string like "15m", got the number 900',
      );
      expect(run.stderr).toContain('nothing was deployed');
      expect(run.status).toBe(1);
    },
  );

  it('deploys with the same --env and --config it checked, after checking the secrets there', () => {
    const path = wranglerFixture(STAGING, { d1Id: '6f1c2a52-3b0e-4b8f-9a51-0d7d2f0b9c11' });
    const { wrangler, calls } = fakeWrangler(['ADMIN_TOKEN']);
    expect(deploy(['--env', 'staging', '--config', path, '--minify'], wrangler)).toBe(0);
    expect(calls).toEqual([
      ['secret', 'list', '--format', 'json', '--env', 'staging', '--config', path],
      ['deploy', '--env', 'staging', '--config', path, '--minify'],
    ]);
  });

  it('refuses to deploy while a secret a poller needs is not set on the Worker, and says how to set it', () => {
    const path = wranglerFixture();
    const { wrangler, calls } = fakeWrangler(['ADMIN_TOKEN', 'WEBHOOK_SECRET']);
    expect(deploy(['--config', path], wrangler)).toBe(1);
    expect(calls.map((call) => call[0])).toEqual(['secret']);
    expect(output.join('\n')).toContain(
      'secret ORDERS_TOKEN is not set on the deployed Worker (poller orders): run `wrangler secret put ORDERS_TOKEN`',
    );
    expect(output.join('\n')).not.toContain('STATUS_TOKEN is not set');
  });

  it('lists every secret and how to set it when the Worker cannot be asked, then deploys', () => {
    const path = wranglerFixture(STAGING);
    const { wrangler, calls } = fakeWrangler('unavailable');
    expect(deploy(['-e', 'staging', '-c', path], wrangler)).toBe(0);
    expect(calls.at(-1)?.[0]).toBe('deploy');
    const said = output.join('\n');
    expect(said).toContain(
      "could not list the deployed Worker's secrets (In a non-interactive environment, it is necessary to set a CLOUDFLARE_API_TOKEN)",
    );
    expect(said).toMatch(/ADMIN_TOKEN\s+wrangler secret put ADMIN_TOKEN --env staging/);
  });

  it('warns of a poller URL on a private network, and deploys all the same', () => {
    const path = wranglerFixture(
      STAGING.replace('https://staging.example.com', 'http://localhost:9000'),
    );
    const { wrangler, calls } = fakeWrangler(['ADMIN_TOKEN']);
    expect(deploy(['--env', 'staging', '--config', path], wrangler)).toBe(0);
    expect(calls.at(-1)?.[0]).toBe('deploy');
    expect(output.join('\n')).toContain(
      'poller "orders": source.url (localhost:9000) is a loopback or private address',
    );
  });

  it('refuses to deploy the demo placeholder D1 id', () => {
    const path = wranglerFixture('', { d1Id: '00000000-0000-0000-0000-000000000000' });
    const { wrangler, calls } = fakeWrangler(['ADMIN_TOKEN', 'ORDERS_TOKEN', 'WEBHOOK_SECRET']);
    expect(deploy(['--config', path], wrangler)).toBe(1);
    expect(calls).toEqual([]);
    expect(output.join('\n')).toContain('has the placeholder database_id');
  });
});
