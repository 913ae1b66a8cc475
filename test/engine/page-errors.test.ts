import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { PollerConfig } from '../../src/config/schema.ts';
import { deletionsSource, listingSource } from '../../src/sources/derived-sources.ts';
import { HttpSource } from '../../src/sources/http-source.ts';
import { pageErrors } from '../../src/sources/page-errors.ts';

const NOW = Date.parse('2026-03-01T11:00:00.000Z');
const window = { from: NOW - 3_600_000, to: NOW, bounded: true, startedAt: NOW, cut: false };
const SECRET = 'sekrit-token-4f1e';

/** A GraphQL-shaped poller: records at data.items.nodes, errors at "errors". */
function load(source: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) {
  const entry = loadPoller(
    'p',
    {
      cron: '* * * * *',
      source: {
        url: 'https://api.example.com/graphql',
        from_param: 'since',
        items: 'data.items.nodes',
        headers: { Authorization: 'Bearer ${TOKEN}' },
        errors: 'errors',
        ...source,
      },
      deliver: { type: 'handler', name: 'x' },
      ...rest,
    },
    { TOKEN: SECRET },
  );
  return entry;
}

function config(source: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) {
  const entry = load(source, rest);
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry;
}

/** A source of `sourceOf(config)` answering every request with `body` (and these headers). */
function answering(
  sourceOf: (config: PollerConfig) => PollerConfig['source'] | null,
  body: unknown,
  headers: Record<string, string> = {},
  source: Record<string, unknown> = {},
  rest: Record<string, unknown> = {},
) {
  const entry = config(source, rest);
  const derived = sourceOf(entry.config);
  if (derived === null) throw new Error('no such source');
  return new HttpSource(
    derived,
    async () => Response.json(body, { headers }),
    entry.secrets,
    () => NOW,
  );
}

const records = [{ id: 'a', updated_at: '2026-03-01T10:30:00Z' }];
const main = (config: PollerConfig) => config.source;

describe('source.errors: what counts as errors', () => {
  it.each([
    ['a non-empty list', [{ message: 'boom' }], 'boom'],
    ['a non-empty object', { message: 'boom' }, 'boom'],
    ['a non-empty string', 'boom', 'boom'],
    ['true', true, 'true'],
    ['a count above 0', 2, '2'],
  ])('%s is errors', (_what, value, said) => {
    expect(pageErrors({ errors: value }, 'errors')).toBe(said);
  });

  it.each([
    ['absent', {}],
    ['null', { errors: null }],
    ['false', { errors: false }],
    ['0', { errors: 0 }],
    ['""', { errors: '' }],
    ['[]', { errors: [] }],
    ['{}', { errors: {} }],
  ])('%s is none', (_what, body) => {
    expect(pageErrors(body, 'errors')).toBeNull();
  });

  it('is not read without source.errors', () => {
    expect(pageErrors({ errors: [{ message: 'boom' }] }, undefined)).toBeNull();
  });

  it('says each error by its message and code, anything else as JSON', () => {
    const errors = [
      { message: 'Throttled', extensions: { code: 'THROTTLED' } },
      { type: 'RATE_LIMITED', message: 'API rate limit exceeded' },
      { message: 'Field "x" does not exist', locations: [{ line: 1, column: 9 }] },
      { code: 7 },
    ];
    expect(pageErrors({ errors }, 'errors')).toBe(
      'Throttled (THROTTLED); API rate limit exceeded (RATE_LIMITED); Field "x" does not exist; {"code":7}',
    );
  });

  it('is a dot path like any other: a nested one, or a key that holds a dot', () => {
    expect(pageErrors({ meta: { 'odata.error': { message: 'boom' } } }, 'meta.odata.error')).toBe(
      'boom',
    );
  });

  it('must be a path that can be found as written', () => {
    const entry = load({ errors: 'errors..list' });
    expect(entry.ok).toBe(false);
    if (!entry.ok) expect(entry.errors.join('\n')).toContain('source.errors');
  });
});

describe('a 200 page with errors', () => {
  it('fails like a 5xx, even with data beside them, saying what the upstream said, redacted', async () => {
    const source = answering(main, {
      data: { items: { nodes: records } },
      errors: [{ message: `token ${SECRET} may not read field "secret"` }],
    });

    const page = await source.fetchPage(window, null);

    expect(page.ok).toBe(false);
    if (page.ok) return;
    expect(page.kind).toBe('transient');
    expect(page.error).toContain('HTTP 200 but the page reports errors at "errors"');
    expect(page.error).toContain('may not read field');
    expect(page.error).not.toContain(SECRET);
  });

  it('shows the start of what the upstream said, cut like a body', async () => {
    const long = 'x'.repeat(1_000);
    const source = answering(main, { errors: [{ message: long }] });

    const page = await source.fetchPage(window, null);

    expect(page.ok).toBe(false);
    if (page.ok) return;
    expect(page.error).toContain(`"${'x'.repeat(200)}"`);
    expect(page.error).not.toContain('x'.repeat(201));
  });

  it('is a rate limit, not retried before the reset, when its quota headers say it is spent', async () => {
    const reset = Math.floor(NOW / 1000) + 120;
    const source = answering(
      main,
      { errors: [{ type: 'RATE_LIMITED', message: 'API rate limit exceeded' }] },
      { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
    );

    const page = await source.fetchPage(window, null);

    expect(page).toMatchObject({ ok: false, kind: 'rate_limited', retryAfter: reset * 1000 });
  });

  it('is a good page when errors is empty', async () => {
    const source = answering(main, { data: { items: { nodes: records } }, errors: [] });

    const page = await source.fetchPage(window, null);

    expect(page).toMatchObject({ ok: true, updates: [{ id: 'a' }] });
  });

  it('fails a page of the deletions stream and of the reconciliation listing too', async () => {
    const body = { data: { items: { nodes: [] } }, errors: [{ message: 'boom' }] };
    const deletions = answering(
      (c) => deletionsSource(c.source),
      body,
      {},
      {
        deletions: { url: 'https://api.example.com/graphql/deleted' },
      },
    );
    const listing = answering(
      listingSource,
      body,
      {},
      {},
      {
        reconcile: { every: '1d', url: 'https://api.example.com/graphql/all' },
      },
    );

    for (const source of [deletions, listing]) {
      const page = await source.fetchPage(window, null);
      expect(page).toMatchObject({ ok: false, kind: 'transient' });
    }
  });
});
