import { runInDurableObject } from 'cloudflare:test';
import { exports } from 'cloudflare:workers';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.ts';
import type { Poller } from '../../src/poller/durable-object.ts';
import { api, objectOf, runtimeConfig, unique } from '../support/fleet.ts';
import { TEST_SECRETS } from '../support/pollers.ts';
import { type FakeUpstream, installFakes } from './fakes.ts';
import { writtenBehindTheStore } from './poller.ts';

const { ADMIN_TOKEN } = TEST_SECRETS;
let upstream: FakeUpstream;

beforeEach(() => {
  ({ upstream } = installFakes());
});

/**
 * Runs `tidemark …` against this Worker: its fetch is the Worker's own, its folder `fleet`
 * the files given, its stdin the text given (null: a terminal).
 */
async function tidemark(
  argv: string[],
  options: { files?: Record<string, string>; stdin?: string | null; token?: string } = {},
) {
  let stdout = '';
  let stderr = '';
  const code = await runCli({
    argv,
    env: { TIDEMARK_URL: 'https://tidemark.test', TIDEMARK_TOKEN: options.token ?? ADMIN_TOKEN },
    fetch: (url, init) => exports.default.fetch(url, init),
    readFile: async (path) => {
      const text = options.files?.[path.replace(/^fleet\//, '')];
      if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      return text;
    },
    readDir: async (path) => {
      if (path !== 'fleet') throw new Error(`ENOENT: no such directory, ${path}`);
      return Object.entries(options.files ?? {}).map(([name, text]) => ({ name, text }));
    },
    readStdin: async () => options.stdin ?? null,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

/** A runtime poller of the fake upstream as a TOML file: what a fleet repository holds. */
const tomlConfig = (every: string, tenant: string, token = 'UPSTREAM_TOKEN') => `
every = "${every}"

[labels]
tenant = "${tenant}"

[source]
url = "https://upstream.test/v1/sessions"
from_param = "date_from"
items = "sessions"
headers = { Authorization = "Bearer \${${token}}" }
next = { type = "cursor", param = "cursor", path = "next_cursor" }

[deliver]
type = "webhook"
url = "https://receiver.test/hooks"
secret = "\${WEBHOOK_SECRET}"
`;

const storedConfig = async (name: string) => {
  const reply = await api('GET', `/pollers/${name}/config`);
  return reply.status === 200 ? ((await reply.json()) as { config: unknown }).config : null;
};

describe('tidemark apply: the runtime fleet as a folder of files', () => {
  it('without --yes prints the plan and changes nothing (exit 2)', async () => {
    const name = unique('cli-plan');

    const result = await tidemark(['apply', 'fleet'], {
      files: { [`${name}.toml`]: tomlConfig('60s', 'acme') },
    });

    expect(result.code).toBe(2);
    expect(result.stdout).toContain(`+ create    ${name}  (fleet/${name}.toml)`);
    expect(result.stdout).toContain('run again with --yes');
    expect(await storedConfig(name)).toBeNull();
  });

  it('--yes creates; a changed file replaces; an unchanged one is left; then the plan is in sync (exit 0)', async () => {
    const fromToml = unique('cli-toml');
    const fromJson = unique('cli-json');
    const files = {
      [`${fromToml}.toml`]: tomlConfig('60s', 'acme'),
      [`${fromJson}.json`]: JSON.stringify(runtimeConfig({ every: '15m' })),
      'README.md': '# our pollers',
    };

    const created = await tidemark(['apply', 'fleet', '--yes'], { files });

    expect(created.code).toBe(0);
    expect(created.stdout).toContain(`created ${fromToml} (version 1)`);
    expect(created.stdout).toContain(`created ${fromJson} (version 1)`);
    expect(created.stderr).toContain('fleet/README.md ignored');
    expect(await storedConfig(fromToml)).toMatchObject({
      every: '60s',
      labels: { tenant: 'acme' },
    });
    expect(await storedConfig(fromJson)).toEqual(runtimeConfig({ every: '15m' }));

    files[`${fromToml}.toml`] = tomlConfig('5m', 'acme');
    const plan = await tidemark(['apply', 'fleet'], { files });
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain(`~ replace   ${fromToml}  (fleet/${fromToml}.toml: every)`);
    expect(plan.stdout).toContain(`= unchanged ${fromJson}`);
    expect(plan.stdout).toContain('Plan: 0 to create, 1 to replace, 0 to delete, 1 unchanged.');

    const replaced = await tidemark(['apply', 'fleet', '--yes'], { files });
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toContain(`replaced ${fromToml} (version 2)`);
    expect(replaced.stdout).not.toContain(`replaced ${fromJson}`);
    expect(await storedConfig(fromToml)).toMatchObject({ every: '5m' });

    const again = await tidemark(['apply', 'fleet'], { files });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('In sync: nothing to do.');
    await api('DELETE', `/pollers/${fromToml}`);
    await api('DELETE', `/pollers/${fromJson}`);
  });

  it('--prune deletes a runtime poller not in the folder, and never a static one', async () => {
    const kept = unique('cli-kept');
    const stray = unique('cli-stray');
    await api('PUT', `/pollers/${kept}`, runtimeConfig());
    await api('PUT', `/pollers/${stray}`, runtimeConfig());
    const files = { [`${kept}.json`]: JSON.stringify(runtimeConfig()) };

    const withoutPrune = await tidemark(['apply', 'fleet'], { files });
    expect(withoutPrune.code).toBe(0);
    expect(withoutPrune.stdout).toContain('--prune deletes them');
    expect(withoutPrune.stdout).toContain(stray);

    const plan = await tidemark(['apply', 'fleet', '--prune'], { files });
    expect(plan.code).toBe(2);
    expect(plan.stdout).toContain(`- delete    ${stray}  (runtime, not in fleet)`);
    // The test Worker's static pollers (zendesk, github, …) are in no plan to delete.
    expect(plan.stdout).not.toMatch(/- delete +(zendesk|github|stripe|poison) /);

    const applied = await tidemark(['apply', 'fleet', '--prune', '--yes'], { files });
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(`deleted ${stray}`);
    expect(await storedConfig(stray)).toBeNull();
    expect(await storedConfig(kept)).toEqual(runtimeConfig());
    expect(await api('GET', '/pollers/zendesk/config').then((r) => r.json())).toMatchObject({
      kind: 'static',
    });
    const trail = (await (await api('GET', '/pollers/deletions')).json()) as {
      deletions: { name: string; reason: string }[];
    };
    expect(trail.deletions.find((entry) => entry.name === stray)?.reason).toBe(
      'tidemark apply --prune: not in fleet',
    );
    await api('DELETE', `/pollers/${kept}`);
  });

  it('--prune --selector deletes only the runtime pollers with its label, not those made elsewhere', async () => {
    const owned = unique('cli-owned');
    const foreign = unique('cli-foreign');
    const labelled = { ...runtimeConfig(), labels: { managed_by: 'fleet-repo' } };
    await api('PUT', `/pollers/${owned}`, labelled);
    await api('PUT', `/pollers/${foreign}`, runtimeConfig());
    const anchor = unique('cli-anchor');
    const files = { [`${anchor}.json`]: JSON.stringify(labelled) };

    const applied = await tidemark(
      ['apply', 'fleet', '--prune', '--selector', 'managed_by=fleet-repo', '--yes'],
      { files },
    );
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(`deleted ${owned}`);
    expect(applied.stdout).not.toContain(foreign);
    expect(await storedConfig(owned)).toBeNull();
    expect(await storedConfig(foreign)).toEqual(runtimeConfig());

    const misused = await tidemark(['apply', 'fleet', '--selector', 'managed_by'], { files });
    expect(misused.code).toBe(1);
    await api('DELETE', `/pollers/${foreign}`);
    await api('DELETE', `/pollers/${anchor}`);
  });

  it('a file naming a static poller is an error in the plan: nothing is applied (exit 1)', async () => {
    const fresh = unique('cli-fresh');
    const result = await tidemark(['apply', 'fleet', '--yes'], {
      files: {
        [`${fresh}.toml`]: tomlConfig('60s', 'acme'),
        'zendesk.toml': tomlConfig('60s', 'acme'),
      },
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'fleet/zendesk.toml: "zendesk" is a static poller (wrangler.toml POLLERS)',
    );
    expect(await storedConfig(fresh)).toBeNull();
  });

  it('one bad TOML file fails the whole apply before any change (exit 1), naming the file and line', async () => {
    const good = unique('cli-good');
    const result = await tidemark(['apply', 'fleet', '--yes', '--prune'], {
      files: {
        [`${good}.toml`]: tomlConfig('60s', 'acme'),
        'broken.toml': 'every = "60s\n[source]\n',
      },
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/fleet\/broken\.toml:1:\d+: TOML syntax error/);
    expect(result.stderr).toContain('Nothing was applied');
    expect(result.stdout).toBe('');
    expect(await storedConfig(good)).toBeNull();
  });

  it('a PUT the Worker refuses prints its errors, exits 1, and then nothing is pruned', async () => {
    const refused = unique('cli-refused');
    const stray = unique('cli-spared');
    await api('PUT', `/pollers/${stray}`, runtimeConfig());

    const result = await tidemark(['apply', 'fleet', '--yes', '--prune'], {
      files: { [`${refused}.json`]: JSON.stringify(runtimeConfig({ every: 'often' })) },
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`refused ${refused} (fleet/${refused}.json): HTTP 400`);
    expect(result.stderr).toMatch(/ {2}- poller ".*": every/);
    // A deletion cannot be undone: none follows a refusal.
    expect(result.stderr).toMatch(
      new RegExp(`not deleted, because a create or replace was refused: .*${stray}`),
    );
    expect(result.stdout).toContain('Applied: 0 created, 0 replaced, 0 deleted, 1 refused.');
    expect(await storedConfig(stray)).toEqual(runtimeConfig());
    await api('DELETE', `/pollers/${stray}`);
  });
});

describe('tidemark secrets set', () => {
  it('reads the value from stdin, and it never appears in the output', async () => {
    const name = unique('cli-secret');
    const value = 'tenant-token-from-stdin-42';
    const sent: (string | null)[] = [];
    ({ upstream } = installFakes({
      'upstream.test': {
        handle: (request: Request) => {
          sent.push(request.headers.get('authorization'));
          return upstream.handle(request);
        },
      },
    }));
    const created = await tidemark(['apply', 'fleet', '--yes'], {
      files: { [`${name}.toml`]: tomlConfig('60s', 'acme', 'TENANT_TOKEN') },
    });
    expect(created.stdout).toContain(
      `needs secret TENANT_TOKEN: printf %s "$VALUE" | npx tidemark secrets set ${name} TENANT_TOKEN`,
    );

    expect(created.stdout).toContain(
      `  config error: poller "${name}": source.headers.Authorization: \${TENANT_TOKEN} is not set`,
    );
    const set = await tidemark(['secrets', 'set', name, 'TENANT_TOKEN'], { stdin: `${value}\n` });

    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(
      new RegExp(`^set ${name}/TENANT_TOKEN at \\S+, for https://upstream\\.test\\n$`),
    );
    const ran = await tidemark(['pollers', 'run', name]);
    expect(ran.code).toBe(0);
    expect(sent).toEqual([`Bearer ${value}`]);
    const printed = [created, set, ran].map((r) => `${r.stdout}${r.stderr}`).join('');
    expect(printed).not.toContain(value);
    expect(printed).not.toContain(ADMIN_TOKEN);
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('tidemark pollers', () => {
  it('lists, gets, pauses, resumes, runs and deletes a poller', async () => {
    const name = unique('cli-ops');
    const start_from = new Date(Date.now() - 60_000).toISOString();
    await api('PUT', `/pollers/${name}`, runtimeConfig({ labels: { cli_case: name }, start_from }));

    const listed = await tidemark(['pollers', 'list', '--label', `cli_case=${name}`, '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ name, kind: 'runtime', labels: { cli_case: name } }),
    ]);
    const table = await tidemark(['pollers', 'list', '--label', `cli_case=${name}`]);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME +KIND +STATE/);
    expect(table.stdout).toMatch(new RegExp(`^${name} +runtime `, 'm'));

    const got = await tidemark(['pollers', 'get', name, '--json']);
    expect(JSON.parse(got.stdout)).toMatchObject({
      status: { name, paused: false },
      config: { kind: 'runtime', version: 1, config: { labels: { cli_case: name } } },
    });

    expect(await tidemark(['pollers', 'pause', name, '--reason', 'upstream maintenance'])).toEqual({
      code: 0,
      stdout: `paused ${name}\n`,
      stderr: '',
    });
    expect(await objectOf(name).status()).toMatchObject({ paused: true, state: 'paused' });
    const whilePaused = await tidemark(['pollers', 'run', name]);
    expect(whilePaused.code).toBe(1);
    expect(whilePaused.stderr).toContain(`${name} did not run`);

    expect((await tidemark(['pollers', 'resume', name])).code).toBe(0);
    expect(await objectOf(name).status()).toMatchObject({ paused: false });
    upstream.add('s1', Date.now() - 30_000);
    const ran = await tidemark(['pollers', 'run', name]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(new RegExp(`^ran ${name}: success, 1 record, \\d+ pages?\\n$`));

    const deleted = await tidemark(['pollers', 'delete', name, '--reason', 'tenant left']);
    expect(deleted).toMatchObject({ code: 0, stdout: `deleted ${name}\n` });
    expect(await storedConfig(name)).toBeNull();
    const gone = await tidemark(['pollers', 'get', name]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('HTTP 404');
  });

  it('reads with STATUS_TOKEN, and an admin command with it is refused (exit 1)', async () => {
    const name = unique('cli-reader');
    await api('PUT', `/pollers/${name}`, runtimeConfig());
    const token = TEST_SECRETS.STATUS_TOKEN;

    expect((await tidemark(['pollers', 'get', name], { token })).code).toBe(0);
    const paused = await tidemark(['pollers', 'pause', name], { token });
    expect(paused.code).toBe(1);
    expect(paused.stderr).toContain('HTTP 403: this token is read-only');
    expect(`${paused.stdout}${paused.stderr}`).not.toContain(token);
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('tidemark dead-letters', () => {
  it('lists a poller’s dead letters, replays one and discards another by key', async () => {
    const name = unique('cli-dead');
    await api('PUT', `/pollers/${name}`, runtimeConfig());
    await runInDurableObject(objectOf(name), (instance: Poller, state) => {
      writtenBehindTheStore(instance);
      for (const [key, id] of [
        [`${name}:a:v1`, 'a'],
        [`${name}:b:v1`, 'b'],
      ]) {
        state.storage.sql.exec(
          `INSERT INTO dead_letters (key, kind, id, version, version_ms, record, error, attempts, first_failure, last_failure)
           VALUES (?, 'delivery', ?, 'v1', 1, ?, 'HTTP 422', 5, ?, ?)`,
          key,
          id,
          JSON.stringify({ id, updated_at: '2026-01-01T00:00:00Z' }),
          Date.now(),
          Date.now(),
        );
      }
    });

    const listed = await tidemark(['dead-letters', 'list', name]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${name}:a:v1 +a +5 +\\S+ +HTTP 422$`, 'm'));
    expect(listed.stdout).toContain(`${name}:b:v1`);

    const replayed = await tidemark(['dead-letters', 'replay', name, `${name}:a:v1`]);
    expect(replayed).toMatchObject({ code: 0, stdout: `replayed ${name}:a:v1: delivered\n` });
    const discarded = await tidemark([
      'dead-letters',
      'discard',
      name,
      `${name}:b:v1`,
      '--reason',
      'deleted upstream',
    ]);
    expect(discarded).toMatchObject({ code: 0, stdout: `discarded ${name}:b:v1\n` });

    const none = await tidemark(['dead-letters', 'list', name, '--json']);
    expect(JSON.parse(none.stdout)).toEqual([]);
    await api('DELETE', `/pollers/${name}`);
  });
});

describe('tidemark preview: a config or a poller, delivering nothing', () => {
  it('previews a file under its name: warnings first, then the requests and a records table', async () => {
    upstream.add('r1', Date.now() - 20 * 60_000);
    upstream.respondOnce(() =>
      Response.json({
        sessions: [{ id: 'r1', updated_at: new Date(Date.now() - 20 * 60_000).toISOString() }],
        next_cursor: null,
        errors: [{ message: 'partial data' }],
      }),
    );
    const name = unique('cli-preview');

    const result = await tidemark(['preview', `fleet/${name}.toml`, '--pages', '2'], {
      files: { [`${name}.toml`]: tomlConfig('60s', 'acme') },
    });

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('1 warning(s):');
    expect(lines[1]).toContain('! body_errors: page 1 has "errors"');
    const requests = lines.indexOf('Requests:');
    const records = lines.findIndex((line) => line.startsWith('Records ('));
    expect(requests).toBeGreaterThan(1);
    expect(lines[requests + 1]).toMatch(/^ {2}METHOD +STATUS +TIME +BYTES +URL$/);
    expect(lines[requests + 2]).toMatch(
      /^ {2}GET +200 +\d+ ms +\d+ B +https:\/\/upstream\.test\/v1\/sessions\?/,
    );
    expect(lines[records]).toBe('Records (1):');
    expect(lines[records + 1]).toMatch(/^ {2}ID +UPDATED_AT +OP +RECORD$/);
    expect(lines[records + 2]).toMatch(/^ {2}r1 +\S+Z +upsert +\{"id":"r1"/);
    expect(result.stdout).toContain('Nothing was delivered or stored.');
    expect(await storedConfig(name)).toBeNull();
  });

  it('previews a poller by name, and prints the answer as JSON with --json', async () => {
    const name = unique('cli-preview');
    await api('PUT', `/pollers/${name}`, runtimeConfig());
    upstream.add('r1', Date.now() - 60_000);
    const from = new Date(Date.now() - 10 * 60_000).toISOString();

    const result = await tidemark(['preview', name, '--from', from, '--json']);

    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout) as {
      records: { id: string }[];
      checkpoint: { from: string; from_source: string };
    };
    expect(answer.records.map((record) => record.id)).toEqual(['r1']);
    expect(answer.checkpoint).toMatchObject({ from, from_source: 'asked' });
    await api('DELETE', `/pollers/${name}`);
  });

  it('prints every error of a config the Worker refuses, and exits 1', async () => {
    const result = await tidemark(['preview', 'fleet/broken.json'], {
      files: { 'broken.json': JSON.stringify({ ...runtimeConfig(), every: 'often', colour: 1 }) },
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('POST /pollers/preview: HTTP 400: invalid poller config');
    expect(result.stderr).toContain('  - poller "broken": every');
    expect(result.stderr).toContain('  - poller "broken": colour');
    expect(upstream.requests).toHaveLength(0);
  });

  it('names a file it cannot read, and refuses --from checkpoint for a file', async () => {
    const missing = await tidemark(['preview', 'fleet/nowhere.toml']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read fleet/nowhere.toml');

    const file = await tidemark(['preview', 'fleet/x.toml', '--from', 'checkpoint'], {
      files: { 'x.toml': tomlConfig('60s', 'acme') },
    });
    expect(file.code).toBe(1);
    expect(file.stderr).toContain('a config file has no checkpoint');
  });
});
