import { describe, expect, it } from 'vitest';
import fleet from '../../docs/fleet.md?raw';
import { LOCAL_FLEET_POLICY, localPolicyArgs } from '../../scripts/dev-vars.ts';
import { isPrivateHost, matchesHostEntry } from '../../src/config/fleet-hosts.ts';
import {
  DEFAULT_FLEET_POLICY,
  type FleetPolicy,
  readFleetPolicy,
} from '../../src/config/fleet-policy.ts';
import { reachedProblems, reachOf } from '../../src/config/fleet-reach.ts';
import {
  asTemplate,
  fromTemplate,
  interpolate,
  referencedNames,
} from '../../src/config/interpolate.ts';
import { loadPoller } from '../../src/config/load.ts';
import { secretsOffOrigin, takeKeepSecrets } from '../../src/config/origin-change.ts';
import type { Reached } from '../../src/config/reach.ts';
import {
  checkRuntimePut,
  loadRuntimePoller,
  loadStoredRuntimePoller,
} from '../../src/config/runtime-poller.ts';
import { authFakes } from '../support/auth-kinds.ts';
import { kindFakes, SUITE_SECRET } from '../support/delivery-kinds.ts';

/** The Worker's env as a runtime config would see it, if nothing stood in between. */
const WORKER = {
  ADMIN_TOKEN: 'admin-token-value',
  STATUS_TOKEN: 'status-token-value',
  SECRETS_KEY: 'secrets-key-value-0123456789abcdef',
  SECRETS_KEY_PREVIOUS: 'previous-key-value-0123456789abcdef',
  WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  UPSTREAM_TOKEN: 'static-pollers-upstream-token',
};

function policyOf(value: unknown): FleetPolicy {
  const read = readFleetPolicy(value);
  if (!read.ok) throw new Error(read.error);
  return read.policy;
}

/** A runtime poller's config, with overrides. */
function config(overrides: Record<string, unknown> = {}) {
  return {
    every: '60s',
    source: {
      url: 'https://acme.zendesk.com/api/v2/tickets',
      from_param: 'start_time',
      headers: { Authorization: 'Bearer ${TENANT_TOKEN}' },
    },
    deliver: { type: 'webhook', url: 'https://hooks.example.com/t', secret: '${WEBHOOK_SECRET}' },
    ...overrides,
  };
}

const source = (overrides: Record<string, unknown>) => ({ ...config().source, ...overrides });

/** What PUT /pollers/acme would answer about this config under `policy`. */
function put(raw: unknown, policy: FleetPolicy = DEFAULT_FLEET_POLICY, own: string[] = []) {
  const { entry, unset } = checkRuntimePut('acme', raw, WORKER, own, policy);
  return { errors: entry.ok ? [] : entry.errors, unset };
}

describe('FLEET_POLICY: reading it', () => {
  it("without one, a runtime config gets its own secrets only: no binding, queue or handler, https, 32 KB, the keys' defaults as caps", () => {
    expect(policyOf(undefined)).toEqual({
      env: [],
      bindings: [],
      handlers: [],
      allow_http: false,
      max_config_bytes: 32768,
      max_body: 16 * 1024 * 1024,
      max_subrequests: 1000,
      max_timeout: 30_000,
    });
  });

  it('takes the wrangler.toml table and the same as a JSON string alike', () => {
    const table = {
      env: ['WEBHOOK_SECRET'],
      bindings: ['DELIVERY_QUEUE'],
      handlers: ['demo-sessions'],
      hosts: ['*.zendesk.com'],
      allow_http: false,
      max_config_bytes: 4096,
      max_subrequests: 5000,
    };
    const read = { ...table, max_body: 64 * 1024 * 1024, max_timeout: 120_000 };
    const written = { ...table, max_body: '64MB', max_timeout: '2m' };
    expect(policyOf(written)).toEqual(read);
    expect(policyOf(JSON.stringify(written))).toEqual(read);
  });

  it.each([
    [{ env: ['X'], extra: true }, 'FLEET_POLICY.extra: unknown key'],
    [{ env: 'WEBHOOK_SECRET' }, 'FLEET_POLICY.env:'],
    [{ env: ['not a name'] }, 'FLEET_POLICY.env[0]: must be var or secret names'],
    [{ allow_http: 'yes' }, 'FLEET_POLICY.allow_http:'],
    [{ max_config_bytes: 0 }, 'FLEET_POLICY.max_config_bytes:'],
    [{ max_config_bytes: 1.5 }, 'FLEET_POLICY.max_config_bytes:'],
    [{ max_body: 'lots' }, 'FLEET_POLICY.max_body: "lots" is not a size'],
    [{ max_subrequests: 1 }, 'FLEET_POLICY.max_subrequests:'],
    [{ max_timeout: 30 }, 'FLEET_POLICY.max_timeout:'],
    [
      { hosts: ['https://acme.zendesk.com/'] },
      'FLEET_POLICY.hosts[0]: "https://acme.zendesk.com/" is not a host',
    ],
    ['{ env: [', 'it is a string but not JSON'],
    [['WEBHOOK_SECRET'], 'it must be a table'],
  ])('is invalid, saying where, for %j', (value, message) => {
    const read = readFleetPolicy(value);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.error).toMatch(/^FLEET_POLICY is invalid: /);
    expect(read.error).toContain(message);
  });

  it.each(['ADMIN_TOKEN', 'STATUS_TOKEN', 'SECRETS_KEY', 'SECRETS_KEY_PREVIOUS'])(
    'can never list %s in env, and says why',
    (name) => {
      const read = readFleetPolicy({ env: ['WEBHOOK_SECRET', name] });
      expect(read).toEqual({
        ok: false,
        error: `FLEET_POLICY is invalid: FLEET_POLICY.env: can never list ${name}: it is the Worker's own credential, never a runtime poller's`,
      });
    },
  );
});

describe('a stored runtime config, as its poller is wired', () => {
  it('is read under the Worker’s FLEET_POLICY as it is now', () => {
    const raw = config({ source: source({ service: 'SELF' }) });
    const own = { TENANT_TOKEN: 'tenant' };
    const loose = { ...WORKER, FLEET_POLICY: { env: ['WEBHOOK_SECRET'], bindings: ['SELF'] } };
    expect(loadStoredRuntimePoller('acme', raw, loose, own).ok).toBe(true);
    const tight = { ...WORKER, FLEET_POLICY: JSON.stringify({ env: ['WEBHOOK_SECRET'] }) };
    const entry = loadStoredRuntimePoller('acme', raw, tight, own);
    expect(entry.ok ? [] : entry.errors).toEqual([
      'poller "acme": source.service: the binding "SELF" is not in FLEET_POLICY.bindings',
    ]);
  });

  it('wires nothing under an invalid FLEET_POLICY, saying why: never a looser policy', () => {
    const invalid = { ...WORKER, FLEET_POLICY: { env: ['WEBHOOK_SECRET'], hots: [] } };
    const entry = loadStoredRuntimePoller('acme', config(), invalid, { TENANT_TOKEN: 'tenant' });
    expect(entry.ok ? [] : entry.errors).toEqual([
      'poller "acme": FLEET_POLICY is invalid: FLEET_POLICY.hots: unknown key',
    ]);
  });
});

describe('FLEET_POLICY.hosts: which hosts match', () => {
  it('"*.zendesk.com" matches any subdomain, in any case, but not the apex or a look-alike', () => {
    for (const host of [
      'acme.zendesk.com',
      'a.b.zendesk.com',
      'ACME.Zendesk.COM',
      'acme.zendesk.com.',
    ])
      expect(matchesHostEntry(host, '*.zendesk.com'), host).toBe(true);
    for (const host of ['zendesk.com', 'evilzendesk.com', 'zendesk.com.evil.io'])
      expect(matchesHostEntry(host, '*.zendesk.com'), host).toBe(false);
  });

  it('any other entry matches exactly, case-insensitively', () => {
    expect(matchesHostEntry('api.github.com', 'API.GitHub.com')).toBe(true);
    expect(matchesHostEntry('uploads.api.github.com', 'api.github.com')).toBe(false);
    expect(matchesHostEntry('[::1]', '[0:0::1]')).toBe(true);
  });

  it.each([
    'localhost',
    'LOCALHOST.',
    'tidemark.localhost',
    'db.internal',
    'printer.local',
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '[::1]',
    '[::]',
    '[fc00::1]',
    '[fd12:3456::1]',
    '[fe80::1]',
    '[::ffff:7f00:1]',
    '[::ffff:a9fe:a9fe]',
  ])('%s is not a public host', (host) => {
    expect(isPrivateHost(host)).toBe(true);
  });

  it.each([
    'example.com',
    'acme.zendesk.com',
    '8.8.8.8',
    '172.32.0.1',
    '192.169.0.1',
    '[2606:4700:4700::1111]',
    '[::ffff:808:808]',
  ])('%s is a public host', (host) => {
    expect(isPrivateHost(host)).toBe(false);
  });
});

describe('a runtime config beyond FLEET_POLICY is refused, naming the key and the policy entry', () => {
  it('a service binding not in bindings (the SELF binding reaches the admin API)', () => {
    const raw = config({ source: source({ service: 'SELF' }) });
    expect(put(raw).errors).toEqual([
      'poller "acme": source.service: the binding "SELF" is not in FLEET_POLICY.bindings',
    ]);
    expect(put(raw, policyOf({ bindings: ['SELF'] })).errors).toEqual([]);
  });

  it('a queue not in bindings, and the handler its consumer would run not in handlers', () => {
    const raw = config({ deliver: { type: 'queue', binding: 'DELIVERY_QUEUE', name: 'sync' } });
    expect(put(raw).errors).toEqual([
      'poller "acme": deliver.binding: the queue "DELIVERY_QUEUE" is not in FLEET_POLICY.bindings',
      'poller "acme": deliver.name: the handler "sync" is not in FLEET_POLICY.handlers',
    ]);
    const allowed = policyOf({ bindings: ['DELIVERY_QUEUE'], handlers: ['sync'] });
    expect(put(raw, allowed).errors).toEqual([]);
  });

  it('a queue without deliver.name runs the handler named like the poller: that one must be listed', () => {
    const raw = config({ deliver: { type: 'queue', binding: 'DELIVERY_QUEUE' } });
    const policy = policyOf({ bindings: ['DELIVERY_QUEUE'], handlers: ['sync'] });
    expect(put(raw, policy).errors).toEqual([
      `poller "acme": deliver.name: the handler "acme" (the poller's name: deliver.name is not set) is not in FLEET_POLICY.handlers`,
    ]);
  });

  it('a handler not in handlers', () => {
    const raw = config({ deliver: { type: 'handler', name: 'demo-sessions' } });
    expect(put(raw).errors).toEqual([
      'poller "acme": deliver.name: the handler "demo-sessions" is not in FLEET_POLICY.handlers',
    ]);
    expect(put(raw, policyOf({ handlers: ['demo-sessions'] })).errors).toEqual([]);
  });

  it('http:// for source.url and deliver.url, unless allow_http', () => {
    const raw = config({
      source: source({ url: 'http://acme.zendesk.com/api' }),
      deliver: { type: 'webhook', url: 'http://hooks.example.com/t', secret: '${WEBHOOK_SECRET}' },
    });
    expect(put(raw).errors).toEqual([
      'poller "acme": source.url: http:// is refused by FLEET_POLICY.allow_http = false (its headers and secrets would travel in clear): use https://',
      'poller "acme": deliver.url: http:// is refused by FLEET_POLICY.allow_http = false (its headers and secrets would travel in clear): use https://',
    ]);
    expect(put(raw, policyOf({ allow_http: true })).errors).toEqual([]);
  });

  it('a host not in hosts, for source.url and a webhook deliver.url', () => {
    const policy = policyOf({ hosts: ['*.zendesk.com'] });
    expect(put(config(), policy).errors).toEqual([
      'poller "acme": deliver.url: the host "hooks.example.com" is not in FLEET_POLICY.hosts',
    ]);
    const elsewhere = config({ source: source({ url: 'https://zendesk.com.evil.io/api' }) });
    expect(
      put(elsewhere, policyOf({ hosts: ['*.zendesk.com', 'hooks.example.com'] })).errors,
    ).toEqual([
      'poller "acme": source.url: the host "zendesk.com.evil.io" is not in FLEET_POLICY.hosts',
    ]);
  });

  it('a host not in hosts, for the deletions stream, the listing and the fetch by id: each named', () => {
    const raw = config({
      source: source({
        url: 'https://tenant.internal.test/api/changes',
        deletions: { url: 'https://tenant.internal.test/api/deleted' },
      }),
      reconcile: {
        every: '1h',
        url: 'https://tenant.internal.test/api/all',
        fetch: 'https://tenant.internal.test/api/items/{id}',
      },
    });
    const policy = policyOf({ hosts: ['*.zendesk.com', 'hooks.example.com'] });
    expect(put(raw, policy).errors).toEqual(
      ['source.url', 'source.deletions.url', 'reconcile.url', 'reconcile.fetch'].map(
        (key) =>
          `poller "acme": ${key}: the host "tenant.internal.test" is not in FLEET_POLICY.hosts`,
      ),
    );
    expect(put(raw, policyOf({ hosts: ['*.internal.test', 'hooks.example.com'] })).errors).toEqual(
      [],
    );
  });

  it("a host not in hosts, for the children's requests: named as source.children.url", () => {
    const raw = config({
      source: source({
        url: 'https://tenant.internal.test/api/issues',
        children: { url: 'https://tenant.internal.test/api/issues/{parent.id}/comments' },
      }),
    });
    expect(put(raw, policyOf({ hosts: ['*.zendesk.com', 'hooks.example.com'] })).errors).toEqual(
      ['source.url', 'source.children.url'].map(
        (key) =>
          `poller "acme": ${key}: the host "tenant.internal.test" is not in FLEET_POLICY.hosts`,
      ),
    );
  });

  it('checks a reconcile.fetch table by its url, and a url holding {from} by its host', () => {
    const raw = config({
      source: source({ url: 'https://tenant.internal.test/api/{from}/changes' }),
      reconcile: {
        every: '1h',
        url: 'https://tenant.internal.test/api/all',
        fetch: {
          url: 'https://tenant.internal.test/graphql',
          method: 'POST',
          body: { variables: { id: '{id}' } },
        },
      },
    });
    const policy = policyOf({ hosts: ['*.zendesk.com', 'hooks.example.com'] });
    expect(put(raw, policy).errors).toEqual(
      ['source.url', 'reconcile.url', 'reconcile.fetch'].map(
        (key) =>
          `poller "acme": ${key}: the host "tenant.internal.test" is not in FLEET_POLICY.hosts`,
      ),
    );
  });

  it.each([
    ['http://localhost:8787/admin', 'localhost'],
    ['https://127.0.0.1/x', '127.0.0.1'],
    ['https://2130706433/x', '127.0.0.1'],
    ['https://0x7f.1/x', '127.0.0.1'],
    ['https://[::ffff:127.0.0.1]/x', '[::ffff:7f00:1]'],
    ['https://169.254.169.254/latest/meta-data', '169.254.169.254'],
    ['https://metadata.google.internal/x', 'metadata.google.internal'],
  ])('with no hosts listed, only public hosts: %s is refused', (url, host) => {
    const raw = config({ source: source({ url }) });
    expect(put(raw, policyOf({ allow_http: true })).errors).toEqual([
      `poller "acme": source.url: the host "${host}" is not a public host (FLEET_POLICY.hosts is not set: only public hosts are allowed)`,
    ]);
  });

  it('a host listed exactly is allowed, private or not (the deployer said so)', () => {
    const raw = config({ source: source({ url: 'http://127.0.0.1:9000/x' }) });
    const policy = policyOf({ hosts: ['127.0.0.1', 'hooks.example.com'], allow_http: true });
    expect(put(raw, policy).errors).toEqual([]);
  });

  it.each(['ADMIN_TOKEN', 'STATUS_TOKEN', 'SECRETS_KEY', 'SECRETS_KEY_PREVIOUS'])(
    '${%s}, whatever the policy, and not as a would-be per-poller secret either',
    (name) => {
      const raw = config({ source: source({ headers: { Authorization: `Bearer \${${name}}` } }) });
      const { errors, unset } = put(raw, policyOf({ env: ['WEBHOOK_SECRET'] }));
      expect(errors).toEqual([
        `poller "acme": source.headers.Authorization: \${${name}} cannot be used in a config: ${name} is the Worker's own credential: FLEET_POLICY.env can never list it, and no runtime poller may use it`,
      ]);
      expect(unset).not.toContain(name);
    },
  );

  it("a source.max_body, max_subrequests or timeout above its cap (by default, the key's own default)", () => {
    const raw = config({
      max_subrequests: 5000,
      source: source({ max_body: '8GB', timeout: '2m' }),
      deliver: {
        type: 'webhook',
        url: 'https://hooks.example.com/t',
        secret: '${WEBHOOK_SECRET}',
        timeout: '90s',
      },
    });
    expect(put(raw).errors).toEqual([
      'poller "acme": source.max_body: 8GB is above FLEET_POLICY.max_body (16MB): set it to at most 16MB',
      'poller "acme": max_subrequests: 5000 is above FLEET_POLICY.max_subrequests (1000): set it to at most 1000',
      'poller "acme": source.timeout: 2m is above FLEET_POLICY.max_timeout (30s): set it to at most 30s',
      'poller "acme": deliver.timeout: 1m30s is above FLEET_POLICY.max_timeout (30s): set it to at most 30s',
    ]);
    const raised = policyOf({ max_body: '8GB', max_subrequests: 5000, max_timeout: '2m' });
    expect(put(raw, raised).errors).toEqual([]);
    // At the caps, and below: taken.
    const within = config({ max_subrequests: 1000, source: source({ max_body: '1MB' }) });
    expect(put(within).errors).toEqual([]);
  });

  it("a cap below a key's default holds a config that leaves the key out, and says what to set", () => {
    expect(put(config(), policyOf({ max_body: '1MB' })).errors).toEqual([
      'poller "acme": source.max_body: 16MB is above FLEET_POLICY.max_body (1MB): set it to at most 1MB',
    ]);
    const set = config({ source: source({ max_body: '512KB' }) });
    expect(put(set, policyOf({ max_body: '1MB' })).errors).toEqual([]);
  });

  it('shows a secret in a host as ${NAME}, never its value', () => {
    const raw = config({ source: source({ url: 'https://${TENANT_HOST}/api' }) });
    const entry = loadRuntimePoller(
      'acme',
      raw,
      WORKER,
      { TENANT_HOST: 'tenant-secret-host.local' },
      DEFAULT_FLEET_POLICY,
    );
    const errors = entry.ok ? [] : entry.errors;
    expect(errors.join('\n')).toContain('the host "${TENANT_HOST}" is not a public host');
    expect(errors.join('\n')).not.toContain('tenant-secret-host');
  });
});

describe('what a kind reaches is data, checked by one function against FLEET_POLICY', () => {
  /** A policy that allows nothing: no host, binding or handler. */
  const nothing = policyOf({ hosts: [] });

  it('refuses a binding FLEET_POLICY.bindings does not list, whatever kind of binding it is', () => {
    const reach: Reached[] = [
      { what: 'binding', key: 'deliver.bucket', name: 'ARCHIVE', noun: 'binding' },
      { what: 'binding', key: 'deliver.binding', name: 'DELIVERY_QUEUE', noun: 'queue' },
    ];
    expect(reachedProblems(reach, DEFAULT_FLEET_POLICY)).toEqual([
      'deliver.bucket: the binding "ARCHIVE" is not in FLEET_POLICY.bindings',
      'deliver.binding: the queue "DELIVERY_QUEUE" is not in FLEET_POLICY.bindings',
    ]);
    expect(reachedProblems(reach, policyOf({ bindings: ['ARCHIVE', 'DELIVERY_QUEUE'] }))).toEqual(
      [],
    );
  });

  it('refuses an entry it has no rule for, rather than letting it pass', () => {
    const unknown = JSON.parse('{ "what": "bucket", "key": "deliver.bucket", "name": "ARCHIVE" }');
    expect(reachedProblems([unknown], DEFAULT_FLEET_POLICY)).toEqual([
      'deliver.bucket: reaches a bucket, which FLEET_POLICY has no entry for',
    ]);
  });

  it('checks every entry every delivery kind and source.auth kind declares: a policy that allows nothing refuses each', () => {
    const pairs = Object.values(kindFakes).flatMap((delivery) =>
      Object.values(authFakes).map((auth) => ({ delivery, auth })),
    );
    for (const { delivery, auth } of pairs) {
      const entry = loadPoller(
        'p',
        {
          cron: '* * * * *',
          source: { url: 'https://api.example.com/v1', from_param: 'since', auth: auth.auth },
          deliver: delivery.deliver,
        },
        { ...auth.env, WEBHOOK_SECRET: SUITE_SECRET },
      );
      if (!entry.ok) throw new Error(entry.errors.join('\n'));
      const reach = reachOf('p', entry.config);
      const refused = reachedProblems(reach, nothing);
      expect(refused).toHaveLength(reach.length);
      expect(refused.map((problem) => problem.split(':')[0])).toEqual(
        reach.map((reached) => reached.key),
      );
    }
  });

  it('holds a jwt_bearer token endpoint to FLEET_POLICY.hosts, like source.url', () => {
    const raw = config({
      source: {
        url: 'https://acme.zendesk.com/api/v2/tickets',
        from_param: 'start_time',
        auth: {
          type: 'jwt_bearer',
          token_url: 'https://oauth2.googleapis.com/token',
          issuer: 'sync@acme.iam.gserviceaccount.com',
          audience: 'https://oauth2.googleapis.com/token',
          private_key: '${SA_KEY}',
        },
      },
    });
    const policy = policyOf({ hosts: ['*.zendesk.com', 'hooks.example.com'] });
    expect(put(raw, policy, ['SA_KEY']).errors).toEqual([
      'poller "acme": source.auth.token_url: the host "oauth2.googleapis.com" is not in FLEET_POLICY.hosts',
    ]);
  });
});

describe('${NAME} for a runtime poller: its own secrets, and only the Worker ones FLEET_POLICY.env lists', () => {
  it('a Worker secret not in env never resolves, even when set: it is a per-poller secret not set yet', () => {
    const raw = config({
      source: source({ headers: { Authorization: 'Bearer ${UPSTREAM_TOKEN}' } }),
    });
    expect(put(raw, policyOf({ env: ['WEBHOOK_SECRET'] }))).toEqual({
      errors: [],
      unset: ['UPSTREAM_TOKEN'],
    });
    const entry = loadRuntimePoller('acme', raw, WORKER, {}, policyOf({ env: ['WEBHOOK_SECRET'] }));
    expect(entry.ok ? [] : entry.errors).toEqual([
      'poller "acme": source.headers.Authorization: ${UPSTREAM_TOKEN} is not set (set it with PUT /pollers/acme/secrets/UPSTREAM_TOKEN)',
    ]);
  });

  it('a Worker secret env lists resolves; the poller’s own secret of the same name comes first', () => {
    const policy = policyOf({ env: ['WEBHOOK_SECRET'] });
    const listed = loadRuntimePoller('acme', config(), WORKER, { TENANT_TOKEN: 'tenant' }, policy);
    expect(listed.ok && listed.config.deliver).toMatchObject({ secret: WORKER.WEBHOOK_SECRET });
    const own = loadRuntimePoller(
      'acme',
      config(),
      WORKER,
      { TENANT_TOKEN: 'tenant', WEBHOOK_SECRET: 'whsec_b3duLXNpZ25pbmctc2VjcmV0LTEyMzQ1Njc4OTA=' },
      policy,
    );
    expect(own.ok && own.config.deliver).toMatchObject({
      secret: 'whsec_b3duLXNpZ25pbmctc2VjcmV0LTEyMzQ1Njc4OTA=',
    });
  });

  it('unset_secrets lists neither the poller’s own secrets nor the Worker ones env lists', () => {
    const policy = policyOf({ env: ['WEBHOOK_SECRET'] });
    expect(put(config(), policy).unset).toEqual(['TENANT_TOKEN']);
    expect(put(config(), policy, ['TENANT_TOKEN']).unset).toEqual([]);
    // With no policy, WEBHOOK_SECRET too is the poller's own to set.
    expect(put(config()).unset).toEqual(['TENANT_TOKEN', 'WEBHOOK_SECRET']);
  });

  it('a missing one points to the secrets route, where a static poller’s points to wrangler', () => {
    const entry = loadRuntimePoller(
      'acme',
      config(),
      WORKER,
      {},
      policyOf({ env: ['WEBHOOK_SECRET'] }),
    );
    expect(entry.ok ? [] : entry.errors).toEqual([
      'poller "acme": source.headers.Authorization: ${TENANT_TOKEN} is not set (set it with PUT /pollers/acme/secrets/TENANT_TOKEN)',
    ]);
    const declared = loadPoller('acme', config(), WORKER);
    expect(declared.ok ? [] : declared.errors).toEqual([
      'poller "acme": source.headers.Authorization: ${TENANT_TOKEN} is not set (run `wrangler secret put TENANT_TOKEN`, or add it to .dev.vars locally)',
    ]);
  });
});

describe('labels and $${', () => {
  it('labels are data: kept as written, never interpolated, never a secret to set', () => {
    const raw = config({ labels: { tenant: '${ADMIN_TOKEN}', team: '${UPSTREAM_TOKEN}' } });
    const declared = loadPoller('acme', raw, { ...WORKER, TENANT_TOKEN: 't' });
    expect(declared.ok && declared.config.labels).toEqual({
      tenant: '${ADMIN_TOKEN}',
      team: '${UPSTREAM_TOKEN}',
    });
    expect(put(raw, policyOf({ env: ['WEBHOOK_SECRET'] }))).toEqual({
      errors: [],
      unset: ['TENANT_TOKEN'],
    });
  });

  it('$${ writes a literal ${, which is no reference', () => {
    const raw = config({
      source: source({ params: { filter: '$${status} is $${open}', raw: 'a$$${TENANT_TOKEN}' } }),
    });
    const entry = loadPoller('acme', raw, { ...WORKER, TENANT_TOKEN: 'tok' });
    expect(entry.ok && entry.config.source.params).toEqual({
      filter: '${status} is ${open}',
      raw: 'a$${TENANT_TOKEN}',
    });
    expect(referencedNames(raw)).toEqual(['TENANT_TOKEN', 'WEBHOOK_SECRET']);
    expect(interpolate({ a: '$${X}' }, {}).errors).toEqual([]);
  });

  it('shows a literal ${ as it was written, and a secret as ${NAME}, however often it is shown', () => {
    const { value, references } = interpolate(
      { url: '$${literal}?k=${KEY}' },
      { KEY: 'secret-value' },
    );
    expect(value).toEqual({ url: '${literal}?k=secret-value' });
    const shown = asTemplate('${literal}?k=secret-value', references);
    expect(shown).toBe('$${literal}?k=${KEY}');
    expect(asTemplate(shown, references)).toBe(shown);
    const built = fromTemplate({ url: '$${literal}?k=${KEY}' }, references, (tokenized) =>
      String((tokenized as { url: string }).url),
    );
    expect(built.show(built.value)).toBe('$${literal}?k=${KEY}');
  });
});

describe('a replace that moves a request to another origin unsets the secrets it carries', () => {
  const before = config({
    source: source({ params: { key: '${TENANT_KEY}' } }),
    deliver: { type: 'webhook', url: 'https://hooks.example.com/t', secret: '${SIGNING}' },
  });

  it('source.url to another origin: the poller’s own secrets used in source, not the Worker’s', () => {
    const after = { ...before, source: { ...before.source, url: 'https://evil.example.net/api' } };
    expect(secretsOffOrigin(before, after, ['TENANT_TOKEN', 'TENANT_KEY', 'SIGNING'])).toEqual([
      'TENANT_TOKEN',
      'TENANT_KEY',
    ]);
  });

  it('source.auth.token_url to another origin: the client secret and refresh token it is sent', () => {
    const auth = {
      type: 'oauth2',
      token_url: 'https://login.example.com/token',
      client_id: 'c',
      client_secret: '${CLIENT_SECRET}',
      refresh_token: '${REFRESH}',
    };
    const withAuth = { ...before, source: { ...before.source, auth } };
    const moved = {
      ...withAuth,
      source: {
        ...withAuth.source,
        auth: { ...auth, token_url: 'https://evil.example.net/token' },
      },
    };
    expect(secretsOffOrigin(withAuth, moved, ['CLIENT_SECRET', 'REFRESH', 'SIGNING'])).toEqual([
      'CLIENT_SECRET',
      'REFRESH',
    ]);
    expect(secretsOffOrigin(withAuth, withAuth, ['CLIENT_SECRET', 'REFRESH'])).toEqual([]);
  });

  it('a webhook deliver.url to another origin: the secrets in deliver', () => {
    const after = { ...before, deliver: { ...before.deliver, url: 'https://other.example.org/t' } };
    expect(secretsOffOrigin(before, after, ['TENANT_TOKEN', 'SIGNING'])).toEqual(['SIGNING']);
  });

  it('the same origin (another path, port spelled out, host in other case) unsets nothing', () => {
    const after = {
      ...before,
      source: { ...before.source, url: 'https://ACME.zendesk.com:443/api/v2/other' },
    };
    expect(secretsOffOrigin(before, after, ['TENANT_TOKEN', 'TENANT_KEY', 'SIGNING'])).toEqual([]);
  });

  it('keep_secrets is the body’s own key, taken out before the config is validated', () => {
    expect(takeKeepSecrets({ ...before, keep_secrets: true })).toEqual({
      ok: true,
      config: before,
      keepSecrets: true,
    });
    expect(takeKeepSecrets(before)).toEqual({ ok: true, config: before, keepSecrets: false });
    expect(takeKeepSecrets({ ...before, keep_secrets: 'yes' })).toEqual({
      ok: false,
      error: 'keep_secrets: expected true or false',
    });
  });
});

describe('npm start: the local FLEET_POLICY', () => {
  it('is valid, and passed to wrangler dev unless .dev.vars has one', () => {
    expect(readFleetPolicy(JSON.stringify(LOCAL_FLEET_POLICY)).ok).toBe(true);
    const args = localPolicyArgs({ ADMIN_TOKEN: 'a' });
    expect(args[0]).toBe('--var');
    expect(readFleetPolicy((args[1] ?? '').replace(/^FLEET_POLICY:/, ''))).toMatchObject({
      ok: true,
    });
    expect(localPolicyArgs({ FLEET_POLICY: '{}' })).toEqual([]);
  });

  it('accepts the fleet example of docs/fleet.md, with the unset_secrets it shows', () => {
    const body = /-d '(\{[\s\S]*?\})'/.exec(fleet)?.[1] ?? '';
    const claimed = /unset_secrets":(\[[^\]]*\])/.exec(fleet)?.[1] ?? '';
    const { entry, unset } = checkRuntimePut(
      'acme-tickets',
      JSON.parse(body),
      WORKER,
      [],
      policyOf(LOCAL_FLEET_POLICY),
    );
    expect(entry.ok ? [] : entry.errors).toEqual([]);
    expect(unset).toEqual(JSON.parse(claimed));
  });
});
