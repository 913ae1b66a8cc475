import { describe, expect, it } from 'vitest';
import { readFleetFolder } from '../../src/cli/fleet-folder.ts';
import { changedPaths } from '../../src/cli/json-diff.ts';
import { hasChanges, planFleet } from '../../src/cli/plan.ts';
import { planLines } from '../../src/cli/plan-text.ts';

const TOML = `#:schema ../schema/poller.schema.json
every = "60s"
start_from = 2026-01-01T00:00:00Z

[labels]
tenant = "acme"

[source]
url = "https://upstream.test/v1/sessions"
headers = { Authorization = "Bearer \${UPSTREAM_TOKEN}" }
`;

describe('apply reads a folder: one file per poller, named by the file', () => {
  it('reads TOML and JSON alike, as the JSON the API stores (a TOML date as its text)', () => {
    const read = readFleetFolder('fleet/', [
      { name: 'acme.toml', text: TOML },
      { name: 'globex.json', text: '{"$schema":"../schema/poller.schema.json","every":"5m"}' },
      { name: 'README.md', text: '# the fleet' },
    ]);
    expect(read).toEqual({
      ok: true,
      pollers: [
        {
          name: 'acme',
          file: 'fleet/acme.toml',
          config: {
            every: '60s',
            start_from: '2026-01-01T00:00:00.000Z',
            labels: { tenant: 'acme' },
            source: {
              url: 'https://upstream.test/v1/sessions',
              headers: { Authorization: 'Bearer ${UPSTREAM_TOKEN}' },
            },
          },
        },
        // `$schema` is for the editor, not part of the config.
        { name: 'globex', file: 'fleet/globex.json', config: { every: '5m' } },
      ],
      ignored: ['fleet/README.md'],
    });
  });

  it('reports every bad file at once, each naming the file (and the line, for TOML)', () => {
    const read = readFleetFolder('fleet', [
      { name: 'a.toml', text: 'every = "60s"\nsource = {\n' },
      { name: 'b.json', text: '{"every": "60s",}' },
      { name: 'c.json', text: '["not", "a", "table"]' },
      { name: 'bad.name.toml', text: 'every = "1m"' },
      { name: 'deletions.json', text: '{}' },
      { name: 'twin.json', text: '{}' },
      { name: 'twin.toml', text: '' },
      { name: 'fine.toml', text: 'every = "1m"' },
    ]);
    expect(read.ok).toBe(false);
    const errors = read.ok ? [] : read.errors;
    expect(errors).toHaveLength(6);
    expect(errors[0]).toMatch(/^fleet\/a\.toml:\d+:\d+: TOML syntax error: /);
    expect(errors[1]).toMatch(/^fleet\/b\.json: JSON syntax error: /);
    expect(errors[2]).toMatch(
      /^fleet\/bad\.name\.toml: the file's name is the poller's: name must be/,
    );
    expect(errors[3]).toBe(
      "fleet/c.json: must be one poller's config (a table of keys), not an array",
    );
    expect(errors[4]).toContain('fleet/deletions.json');
    expect(errors[5]).toBe(
      'fleet/twin.toml: poller "twin" is also fleet/twin.json: keep one file per poller',
    );
  });

  it('refuses a YAML file: it looks like a config, and --prune would delete its poller', () => {
    const read = readFleetFolder('fleet', [
      { name: 'acme.yaml', text: 'every: 60s' },
      { name: 'globex.yml', text: 'every: 5m' },
      { name: 'fine.toml', text: 'every = "1m"' },
    ]);
    expect(read).toEqual({
      ok: false,
      errors: [
        'fleet/acme.yaml: apply reads TOML and JSON only: write it as NAME.toml or NAME.json',
        'fleet/globex.yml: apply reads TOML and JSON only: write it as NAME.toml or NAME.json',
      ],
    });
  });
});

describe('changedPaths: deep equality, as paths', () => {
  it('ignores the order of keys, and names each path that differs', () => {
    expect(changedPaths({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toEqual([]);
    expect(
      changedPaths(
        { every: '60s', source: { url: 'u', params: { t: 'a' } }, labels: { x: '1' } },
        { every: '5m', source: { url: 'u', params: { t: 'b' } }, deliver: {} },
      ),
    ).toEqual(['deliver', 'every', 'labels', 'source.params.t']);
    expect(changedPaths({ a: [1, 2] }, { a: [1, 3] })).toEqual(['a[1]']);
    expect(changedPaths({ a: [1] }, { a: [1, 2] })).toEqual(['a']);
    expect(changedPaths({ a: 1 }, { a: '1' })).toEqual(['a']);
    expect(changedPaths(null, { a: 1 })).toEqual(['(the whole config)']);
  });
});

const desired = (name: string, config: Record<string, unknown>) => ({
  name,
  file: `fleet/${name}.toml`,
  config,
});

describe('planFleet: what apply would do', () => {
  const listed = [
    { name: 'same', kind: 'runtime' },
    { name: 'moved', kind: 'runtime' },
    { name: 'stray', kind: 'runtime' },
    { name: 'zendesk', kind: 'static' },
  ];
  const stored = new Map<string, unknown>([
    ['same', { every: '60s', labels: { tenant: 'acme' } }],
    ['moved', { every: '60s' }],
    ['stray', { every: '60s' }],
  ]);

  it('creates what is new, replaces what differs, leaves what is deep-equal, keeps strays without --prune', () => {
    const plan = planFleet({
      dir: 'fleet',
      desired: [
        desired('new', { every: '1m' }),
        desired('same', { labels: { tenant: 'acme' }, every: '60s' }),
        desired('moved', { every: '5m' }),
      ],
      listed,
      stored,
      prune: false,
    });
    expect(plan).toEqual({
      steps: [
        { action: 'create', name: 'new', file: 'fleet/new.toml', config: { every: '1m' } },
        {
          action: 'replace',
          name: 'moved',
          file: 'fleet/moved.toml',
          config: { every: '5m' },
          changed: ['every'],
        },
        { action: 'unchanged', name: 'same', file: 'fleet/same.toml' },
      ],
      kept: ['stray'],
      errors: [],
    });
    expect(hasChanges(plan)).toBe(true);
    expect(planLines(plan, 'fleet')).toEqual([
      '+ create    new  (fleet/new.toml)',
      '~ replace   moved  (fleet/moved.toml: every)',
      '= unchanged same  (fleet/same.toml)',
      '  (1 runtime poller not in fleet kept; --prune deletes them: stray)',
      'Plan: 1 to create, 1 to replace, 0 to delete, 1 unchanged.',
    ]);
  });

  it('with --prune deletes runtime pollers not in the folder, never a static one', () => {
    const plan = planFleet({
      dir: 'fleet',
      desired: [desired('same', { every: '60s', labels: { tenant: 'acme' } })],
      listed,
      stored,
      prune: true,
    });
    expect(plan.steps).toEqual([
      { action: 'delete', name: 'moved' },
      { action: 'delete', name: 'stray' },
      { action: 'unchanged', name: 'same', file: 'fleet/same.toml' },
    ]);
    expect(plan.kept).toEqual([]);
  });

  it('with --selector prunes only the runtime pollers carrying its label: the ones the folder owns', () => {
    const labelled: { name: string; kind: string; labels: Record<string, string> }[] = [
      { name: 'ours', kind: 'runtime', labels: { managed_by: 'fleet-repo' } },
      { name: 'theirs', kind: 'runtime', labels: { managed_by: 'product' } },
      { name: 'unlabelled', kind: 'runtime', labels: {} },
      { name: 'zendesk', kind: 'static', labels: { managed_by: 'fleet-repo' } },
    ];
    const plan = planFleet({
      dir: 'fleet',
      desired: [desired('kept', { every: '60s' })],
      listed: labelled,
      stored: new Map(),
      prune: true,
      selector: { key: 'managed_by', value: 'fleet-repo' },
    });
    expect(plan.steps).toEqual([
      { action: 'create', name: 'kept', file: 'fleet/kept.toml', config: { every: '60s' } },
      { action: 'delete', name: 'ours' },
    ]);
  });

  it('refuses --prune with an empty folder: a wrong path must not delete the fleet', () => {
    const plan = planFleet({ dir: 'flet', desired: [], listed, stored, prune: true });
    expect(plan.steps).toEqual([]);
    expect(plan.errors).toEqual([
      'flet holds no poller files: --prune would delete every runtime poller (3); nothing is planned',
    ]);
  });

  it('refuses a file that names a static poller: it belongs to wrangler.toml', () => {
    const plan = planFleet({
      dir: 'fleet',
      desired: [desired('zendesk', { every: '1m' })],
      listed,
      stored,
      prune: false,
    });
    expect(plan.errors).toEqual([
      'fleet/zendesk.toml: "zendesk" is a static poller (wrangler.toml POLLERS): change it there, and take this file out of fleet',
    ]);
    expect(plan.steps).toEqual([]);
  });

  it('keep_secrets is a key of the request, not of the config: it is no change', () => {
    const plan = planFleet({
      dir: 'fleet',
      desired: [desired('moved', { every: '60s', keep_secrets: true })],
      listed,
      stored,
      prune: false,
    });
    expect(plan.steps).toEqual([{ action: 'unchanged', name: 'moved', file: 'fleet/moved.toml' }]);
    expect(hasChanges(plan)).toBe(false);
  });
});
