import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { checkConfig } from '../../scripts/check-config.ts';
import { SPAWNS_PROCESSES } from '../support/spawned.ts';
import { BROKEN_STAGING, wranglerFixture } from '../support/wrangler-fixture.ts';

describe('npm run check-config', () => {
  it('reports a TOML syntax error as one line with its line number', () => {
    const path = wranglerFixture('[vars.POLLERS.broken]\ncron = "* * * * *\n');
    const result = checkConfig({ configPath: path });
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatch(
      new RegExp(`^${path.replaceAll('.', '\\.')}:\\d+:\\d+: TOML syntax error: [^\\n]+$`),
    );
    const broken = readFileSync(path, 'utf8').split('\n').indexOf('cron = "* * * * *') + 1;
    expect(result.errors[0]?.startsWith(`${path}:${broken}:`)).toBe(true);
  });

  it('needs one cron in [triggers].crons: the watchdog that arms every poller', () => {
    const path = wranglerFixture();
    writeFileSync(path, readFileSync(path, 'utf8').replace('crons = ["* * * * *"]', 'crons = []'));
    expect(checkConfig({ configPath: path }).errors).toEqual([
      expect.stringContaining('[triggers].crons is empty: add one cron'),
    ]);
  });

  it('checks the environment it is given, not the top level', () => {
    const path = wranglerFixture(BROKEN_STAGING);
    expect(checkConfig({ configPath: path }).errors).toEqual([]);
    expect(checkConfig({ configPath: path, environment: 'staging' }).errors).toEqual([
      'poller "orders": lease_ttl: expected a duration string like "15m", got the number 900',
    ]);
  });

  it('refuses a FLEET_POLICY the Worker would refuse, before a deploy fails every runtime poller', () => {
    const path = wranglerFixture('[vars.FLEET_POLICY]\nenv = ["ADMIN_TOKEN"]\n');
    expect(checkConfig({ configPath: path }).errors).toEqual([
      expect.stringContaining('ADMIN_TOKEN'),
    ]);
  });

  it('does not ask for a secret that a label or a $${ only looks like', () => {
    const path = wranglerFixture('[vars.POLLERS.orders.labels]\nnote = "${NOT_A_SECRET}"\n');
    const names = checkConfig({ configPath: path }).secrets.map((need) => need.name);
    expect(names).not.toContain('NOT_A_SECRET');
  });

  it('checks a request body in TOML: the window as {from}, the cursor in the body, and a body sent with a GET', () => {
    const check = (method: string) =>
      checkConfig({
        configPath: wranglerFixture(`[vars.POLLERS.contacts]
cron = "* * * * *"
deliver = { type = "handler", name = "contacts" }
[vars.POLLERS.contacts.source]
url = "https://api.hubapi.com/crm/v3/objects/contacts/search"
method = "${method}"
time_format = "unix_ms"
body = { filterGroups = [{ filters = [{ propertyName = "hs_lastmodifieddate", operator = "GTE", value = "{from}" }] }], limit = 100 }
items = "results"
next = { type = "cursor", in = "body", param = "after", path = "paging.next.after" }
`),
      }).errors;
    expect(check('POST')).toEqual([]);
    expect(check('GET')).toEqual([
      'poller "contacts": source.next.in: is "body" but the request is a GET, which has no body: set method = "POST"',
      'poller "contacts": source.method: is "GET", which sends no body, but source.body is set: set method = "POST"',
    ]);
  });

  it('flags a next-page path that can never be found in a body: every window would end at its first page', () => {
    const next = (items: string, path: string) => check(items, path).errors;
    const check = (items: string, path: string) =>
      checkConfig({
        configPath: wranglerFixture(`[vars.POLLERS.feed]
cron = "* * * * *"
source = { url = "https://api.example.com/feed", from_param = "since", items = "${items}", next = { type = "cursor", param = "cursor", path = "${path}" } }
deliver = { type = "handler", name = "feed" }
`),
      });
    expect(next('orders', 'meta.next_cursor')).toEqual([]);
    // A key that holds a dot (Microsoft Graph's) is a path like any other.
    expect(next('value', '@odata.nextLink')).toEqual([]);
    expect(next('d.results', 'd.odata.next')).toEqual([]);
    expect(next('orders', 'meta..next')).toEqual([
      'poller "feed": source.next.path: "meta..next" has an empty step (a leading, trailing or doubled "."): write the keys as the body has them, with no leading "." (this path cannot reach a key that starts or ends with "." or holds "..")',
    ]);
    expect(next('orders', 'meta.next.')).toEqual([expect.stringContaining('has an empty step')]);
    expect(next('orders', 'meta. next')).toEqual([
      expect.stringContaining('"meta. next" has a step that starts or ends with a space'),
    ]);
    expect(next('data.orders', 'data')).toEqual([
      'poller "feed": source.next.path: "data" cannot hold the next cursor: that is where the records are (source.items = "data.orders"), never the next cursor',
    ]);
    // A body that is the array of records has no key for a cursor: a warning, the config loads.
    const arrayBody = check('', 'next_cursor');
    expect(arrayBody.errors).toEqual([]);
    expect(arrayBody.warnings).toEqual([
      expect.stringContaining(
        'poller "feed": source.next.path: "next_cursor" cannot hold the next cursor: source.items is "" (the body is the array of records)',
      ),
    ]);
  });

  it('refuses stamps read in whole minutes without a minute of lag_allowance, saying why', () => {
    const jira = (lag: string) =>
      checkConfig({
        configPath: wranglerFixture(`[vars.POLLERS.issues]
cron = "* * * * *"
lag_allowance = "${lag}"
source = { url = "https://acme.atlassian.net/rest/api/3/search", from_param = "from", time_format = "yyyy/MM/dd HH:mm", updated_at_format = "yyyy/MM/dd HH:mm", time_zone = "America/Los_Angeles" }
deliver = { type = "handler", name = "issues" }
`),
      }).errors;
    expect(jira('30s')).toEqual([
      expect.stringContaining(
        'poller "issues": lag_allowance: must be at least 1m with updated_at_format = "yyyy/MM/dd HH:mm": its stamps are whole minutes',
      ),
    ]);
    expect(jira('90s')).toEqual([]);
  });

  it('refuses an environment that wrangler.toml does not declare', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {}); // wrangler's own, too
    const path = wranglerFixture();
    expect(checkConfig({ configPath: path, environment: 'prod' }).errors).toEqual([
      `${path} has no [env.prod]: wrangler would fall back to the top level's settings`,
    ]);
    warn.mockRestore();
  });

  it('lists the secrets each poller needs, and the API tokens, but not the vars it uses', () => {
    const result = checkConfig({ configPath: wranglerFixture() });
    expect(result.secrets).toEqual([
      { name: 'ADMIN_TOKEN', usedBy: ['the admin API and the dashboard'], optional: false },
      {
        name: 'STATUS_TOKEN',
        usedBy: ['read-only API access (ADMIN_TOKEN reads too)'],
        optional: true,
      },
      {
        name: 'SECRETS_KEY',
        usedBy: ['per-poller secrets stored through the API'],
        optional: true,
      },
      { name: 'ORDERS_TOKEN', usedBy: ['poller orders'], optional: false },
      { name: 'WEBHOOK_SECRET', usedBy: ['poller orders'], optional: false },
    ]);
  });

  it('asks for SECRETS_KEY, not as optional, when a poller authenticates with OAuth 2.0', () => {
    const path = wranglerFixture(
      '[vars.POLLERS.orders.source.auth]\ntype = "oauth2"\ntoken_url = "https://login.example.com/token"\nclient_id = "c"\nclient_secret = "${CLIENT_SECRET}"\nrefresh_token = "${REFRESH_TOKEN}"\n',
    );
    const key = checkConfig({ configPath: path }).secrets.find(
      (need) => need.name === 'SECRETS_KEY',
    );
    expect(key).toEqual({
      name: 'SECRETS_KEY',
      usedBy: ['per-poller secrets stored through the API', 'poller orders (source.auth = oauth2)'],
      optional: false,
    });
  });

  it('asks for SECRETS_KEY for a jwt_bearer poller too, and not for an api_key one (nothing to keep)', () => {
    const jwt = wranglerFixture(
      '[vars.POLLERS.orders.source.auth]\ntype = "jwt_bearer"\ntoken_url = "https://login.example.com/token"\nissuer = "i"\naudience = "https://login.example.com"\nprivate_key = "${PRIVATE_KEY}"\n',
    );
    const report = checkConfig({ configPath: jwt });
    expect(report.secrets.find((need) => need.name === 'SECRETS_KEY')).toEqual({
      name: 'SECRETS_KEY',
      usedBy: [
        'per-poller secrets stored through the API',
        'poller orders (source.auth = jwt_bearer)',
      ],
      optional: false,
    });
    const key = wranglerFixture(
      '[vars.POLLERS.orders.source.auth]\ntype = "api_key"\nin = "query"\nname = "api_key"\nkey = "${API_KEY}"\n',
    );
    const keyed = checkConfig({ configPath: key });
    expect(keyed.errors).toEqual([]);
    expect(keyed.secrets.find((need) => need.name === 'SECRETS_KEY')?.optional).toBe(true);
    expect(keyed.secrets.map((need) => need.name)).toContain('API_KEY');
  });

  it('warns of a loopback or private source or delivery URL for Cloudflare, not for npm start', () => {
    const production = `
[env.production.vars]
REGION = "eu"
[env.production.vars.POLLERS.orders]
cron = "* * * * *"
source = { url = "http://127.0.0.1:9000/orders", from_param = "since" }
deliver = { type = "webhook", url = "http://10.1.2.3:8080/hooks", secret = "\${WEBHOOK_SECRET}" }
[env.production.vars.POLLERS.demo]
cron = "* * * * *"
source = { url = "https://demo.tidemark.internal/demo/sessions", service = "SELF", from_param = "since" }
deliver = { type = "webhook", url = "https://hooks.example.com/in", secret = "\${WEBHOOK_SECRET}" }
`;
    const path = wranglerFixture(production);
    const remote = checkConfig({ configPath: path, environment: 'production', remote: true });
    expect(remote.errors).toEqual([]);
    // Only the orders poller: the demo's source goes through its service binding.
    expect(remote.warnings).toEqual([
      'poller "orders": source.url (127.0.0.1:9000) is a loopback or private address: a deployed Worker cannot reach it (it answers only under npm start)',
      'poller "orders": deliver.url (10.1.2.3:8080) is a loopback or private address: a deployed Worker cannot reach it (it answers only under npm start)',
    ]);
    expect(checkConfig({ configPath: path, environment: 'production' }).warnings).toEqual([]);
  });

  it('flags the all-zero D1 id: a warning for npm start, an error for a deploy', () => {
    const path = wranglerFixture('', { d1Id: '00000000-0000-0000-0000-000000000000' });
    const local = checkConfig({ configPath: path });
    expect(local.errors).toEqual([]);
    expect(local.warnings.join('\n')).toContain(
      'd1_databases: DB ("tidemark-demo") has the placeholder database_id 00000000-0000-0000-0000-000000000000: a deploy would fail',
    );
    const deploy = checkConfig({ configPath: path, deploy: true });
    expect(deploy.errors.join('\n')).toContain('`wrangler d1 create tidemark-demo`');
    const real = wranglerFixture('', { d1Id: '6f1c2a52-3b0e-4b8f-9a51-0d7d2f0b9c11' });
    expect(checkConfig({ configPath: real, deploy: true }).errors).toEqual([]);
  });

  it('says which secrets are unset in .dev.vars', SPAWNS_PROCESSES, () => {
    const path = wranglerFixture();
    const dir = resolve(path, '..');
    writeFileSync(join(dir, '.dev.vars'), 'ADMIN_TOKEN=a\nORDERS_TOKEN=o\n');
    const run = spawnSync(
      process.execPath,
      [resolve('scripts/check-config.ts'), '--config', 'wrangler.toml'],
      { cwd: dir, encoding: 'utf8' },
    );
    expect(run.status).toBe(0);
    const rows = run.stdout.split('\n').filter((line) => line.startsWith('  '));
    expect(
      rows.map((row) =>
        row
          .trim()
          .split(/\s{2,}/)
          .slice(0, 2),
      ),
    ).toEqual([
      ['ADMIN_TOKEN', 'set in .dev.vars'],
      ['STATUS_TOKEN', 'NOT SET in .dev.vars'],
      ['SECRETS_KEY', 'NOT SET in .dev.vars'],
      ['ORDERS_TOKEN', 'set in .dev.vars'],
      ['WEBHOOK_SECRET', 'NOT SET in .dev.vars'],
    ]);
  });
});
