import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { SourceConfig } from '../../src/config/schema.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { PageResult, RunContext } from '../../src/engine/ports.ts';
import type { Window } from '../../src/engine/window.ts';
import { writeBodyPath } from '../../src/sources/request/body-path.ts';
import { pageDraft, windowDraft } from '../../src/sources/request/build.ts';
import { requestOf } from '../../src/sources/request/draft.ts';
import { renderBody, renderText, windowBounds } from '../../src/sources/request/placeholders.ts';

/**
 * Request templating: `source.method` and `source.body`, the window placeholders `{from}`
 * and `{to}` in `url`, `params` and the body, and a paging style's value in the body
 * (`next.in = "body"`).
 */

const FROM = Date.parse('2026-03-01T10:00:00.000Z');
const TO = Date.parse('2026-03-01T11:00:00.000Z');
const window: Window = { from: FROM, to: TO, bounded: true, startedAt: TO, cut: false };

function load(source: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return loadPoller(
    'p',
    {
      cron: '* * * * *',
      source: { url: 'https://api.example.com/search', ...source },
      deliver: { type: 'handler', name: 'x' },
      ...extra,
    },
    { TOKEN: 'tok-secret-123' },
  );
}

function sourceOf(source: Record<string, unknown>): SourceConfig {
  const entry = load(source);
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry.config.source;
}

function errorsOf(source: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const entry = load(source, extra);
  return entry.ok ? [] : entry.errors;
}

describe('window placeholders', () => {
  it('puts the window bounds in the url, in params values and in body strings, in time_format', () => {
    const source = sourceOf({
      url: 'https://api.example.com/since/{from}/search',
      params: { jql: 'updated >= "{from}" AND updated < "{to}"' },
      method: 'POST',
      body: { filter: { after: '{from}', range: ['from {from}', 'to {to}'] } },
    });
    const draft = windowDraft(source, window);
    expect(draft.url.pathname).toBe('/since/2026-03-01T10%3A00%3A00.000Z/search');
    expect(draft.url.searchParams.get('jql')).toBe(
      'updated >= "2026-03-01T10:00:00.000Z" AND updated < "2026-03-01T11:00:00.000Z"',
    );
    expect(draft.body).toEqual({
      filter: {
        after: '2026-03-01T10:00:00.000Z',
        range: ['from 2026-03-01T10:00:00.000Z', 'to 2026-03-01T11:00:00.000Z'],
      },
    });
  });

  it('sends a body string that is exactly {from} or {to} as a JSON number with unix time formats', () => {
    for (const [format, from, to] of [
      ['unix_ms', FROM, TO],
      ['unix', FROM / 1000, TO / 1000],
    ] as const) {
      const source = sourceOf({
        method: 'POST',
        time_format: format,
        body: { gte: '{from}', lt: '{to}', text: 'since {from}' },
      });
      expect(windowDraft(source, window).body).toEqual({
        gte: from,
        lt: to,
        text: `since ${from}`,
      });
    }
    const iso = sourceOf({ method: 'POST', body: { gte: '{from}' } });
    expect(windowDraft(iso, window).body).toEqual({ gte: '2026-03-01T10:00:00.000Z' });
  });

  it('writes {{from}} and {{to}} as a literal {from} and {to}', () => {
    const bounds = windowBounds(window, 'iso');
    expect(renderText('a {{from}} b {from} c {{to}}', bounds)).toBe(
      'a {from} b 2026-03-01T10:00:00.000Z c {to}',
    );
    const source = sourceOf({ from_param: 'since', method: 'POST', body: { q: '{{from}}' } });
    expect(windowDraft(source, window).body).toEqual({ q: '{from}' });
  });

  it('never alters a GraphQL query written naturally', () => {
    const query = `query Issues($after: String, $from: DateTime) {
  issues(first: 50, after: $after, filter: { updatedAt: { gte: $from } }) {
    nodes { id updatedAt } edges{cursor node{id}} pageInfo { hasNextPage endCursor }
    { from } { to } {from } { to} {From} {fromage} {{ from }}
  }
}`;
    const source = sourceOf({
      method: 'POST',
      body: { query, variables: { from: '{from}' } },
    });
    expect(windowDraft(source, window).body).toEqual({
      query,
      variables: { from: '2026-03-01T10:00:00.000Z' },
    });
  });

  it('leaves a body without the two placeholder names exactly as it was', () => {
    const noPlaceholder = fc.string().filter((text) => !/\{(from|to)\}/.test(text));
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        noPlaceholder,
        fc.double({ noNaN: true }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(fc.string(), tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(json, fc.constantFrom('iso', 'unix', 'unix_ms' as const), (body, format) => {
        const rendered = renderBody(body, windowBounds(window, format));
        expect(rendered).toBe(body);
        expect(JSON.stringify(rendered)).toBe(JSON.stringify(body));
      }),
    );
  });
});

describe('method and body', () => {
  it('sends a POST body as JSON with Content-Type application/json', async () => {
    const source = sourceOf({ from_param: 'since', method: 'POST', body: { limit: 100 } });
    const request = requestOf(windowDraft(source, window), {});
    expect(request.method).toBe('POST');
    expect(request.headers.get('content-type')).toBe('application/json');
    expect(await request.json()).toEqual({ limit: 100 });
  });

  it('keeps a Content-Type that source.headers sets', () => {
    const source = sourceOf({
      from_param: 'since',
      method: 'POST',
      headers: { 'Content-Type': 'application/vnd.api+json' },
      body: { limit: 100 },
    });
    const request = requestOf(windowDraft(source, window), {});
    expect(request.headers.get('content-type')).toBe('application/vnd.api+json');
  });

  it('sends a GET without a body, as before', () => {
    const source = sourceOf({ from_param: 'since' });
    const request = requestOf(windowDraft(source, window), {});
    expect(request.method).toBe('GET');
    expect(request.body).toBeNull();
    expect(request.headers.get('content-type')).toBeNull();
  });
});

describe('the paging value in the body', () => {
  it('puts the cursor at a dot path of the body, absent on the first page', () => {
    const source = sourceOf({
      method: 'POST',
      body: { query: 'q', variables: { from: '{from}', first: 50 } },
      next: {
        type: 'cursor',
        in: 'body',
        param: 'variables.after',
        path: 'data.pageInfo.endCursor',
      },
    });
    const first = windowDraft(source, window);
    expect(pageDraft(source, window, null, first).body).toEqual({
      query: 'q',
      variables: { from: '2026-03-01T10:00:00.000Z', first: 50 },
    });
    expect(pageDraft(source, window, 'c2', first).body).toEqual({
      query: 'q',
      variables: { from: '2026-03-01T10:00:00.000Z', first: 50, after: 'c2' },
    });
    // The window's request is the same for its next page: nothing was written into it.
    expect(first.body).toEqual({
      query: 'q',
      variables: { from: '2026-03-01T10:00:00.000Z', first: 50 },
    });
    expect([...pageDraft(source, window, 'c2', first).url.searchParams.keys()]).toEqual([]);
  });

  it('sends page numbers and offsets in the body as JSON numbers, from the first page', () => {
    const source = sourceOf({
      method: 'POST',
      body: { since: '{from}' },
      next: { type: 'offset', in: 'body', param: 'startAt' },
    });
    expect(pageDraft(source, window, null).body).toEqual({
      since: '2026-03-01T10:00:00.000Z',
      startAt: 0,
    });
    expect(pageDraft(source, window, '50').body).toMatchObject({ startAt: 50 });
  });

  it('reaches a key that holds a dot as written, and adds the steps that are missing', () => {
    expect(writeBodyPath({ 'page.after': null, x: 1 }, 'page.after', 'c')).toEqual({
      'page.after': 'c',
      x: 1,
    });
    expect(
      writeBodyPath({ pagination: { per_page: 5 } }, 'pagination.starting_after', 'c'),
    ).toEqual({ pagination: { per_page: 5, starting_after: 'c' } });
    expect(writeBodyPath(undefined, 'after', 'c')).toEqual({ after: 'c' });
  });
});

describe('config rules of request templating', () => {
  it('takes a config whose window start is only {from}, in the url, params or body', () => {
    expect(errorsOf({ url: 'https://api.example.com/x?since={from}' })).toEqual([]);
    expect(errorsOf({ params: { q: 'updated > {from}' } })).toEqual([]);
    expect(errorsOf({ method: 'POST', body: { after: '{from}' } })).toEqual([]);
  });

  it('refuses a config that sends the window start nowhere, saying where it may go', () => {
    expect(errorsOf({ method: 'POST', body: { after: '{{from}}' } })).toContain(
      'poller "p": source.from_param: is required unless source.url, params or body sends the window start as {from}: a request without it would ask for every record every time',
    );
  });

  it('refuses a body with a GET', () => {
    expect(errorsOf({ from_param: 'since', body: { a: 1 } })).toContain(
      'poller "p": source.method: is "GET", which sends no body, but source.body is set: set method = "POST"',
    );
  });

  it('refuses a placeholder in the host of a url', () => {
    expect(errorsOf({ url: 'https://{from}.example.com/x' })).toContain(
      'poller "p": source.url: may hold {from} and {to} only in its path and query: a window bound must not choose the host its credentials go to',
    );
  });

  it('refuses a value in the body of a GET, or of a body that is not a table', () => {
    const next = { type: 'cursor', in: 'body', param: 'after', path: 'next' };
    expect(errorsOf({ from_param: 'since', next })).toContain(
      'poller "p": source.next.in: is "body" but the request is a GET, which has no body: set method = "POST"',
    );
    expect(errorsOf({ from_param: 'since', method: 'POST', body: [1], next })).toContain(
      'poller "p": source.next.in: is "body" but the body is not a table: next.param "after" has no place in it',
    );
  });

  it('lets {to} bound a window as to_param does, so max_window is taken', () => {
    expect(
      errorsOf({ method: 'POST', body: { gte: '{from}', lt: '{to}' } }, { max_window: '1h' }),
    ).toEqual([]);
    expect(errorsOf({ method: 'POST', body: { gte: '{from}' } }, { max_window: '1h' })).toContain(
      'poller "p": max_window: needs source.to_param (or {to} in source.url, params or body): a window can only be bounded if the upstream takes an end',
    );
  });

  it('caps a body like a config', () => {
    const errors = errorsOf({
      from_param: 'since',
      method: 'POST',
      body: { q: 'x'.repeat(40_000) },
    });
    expect(errors.join('\n')).toContain(
      'source.body: is 40008B as JSON: a body is capped like a config, at 32KB',
    );
  });

  it('refuses a window placeholder in the listing, which has no window', () => {
    const reconcile = {
      every: '1h',
      url: 'https://api.example.com/all',
      method: 'POST',
      body: { since: '{from}' },
    };
    expect(errorsOf({ from_param: 'since' }, { reconcile })).toContain(
      'poller "p": reconcile: uses {from} in its url, params or body, but a listing has no window; write {{from}} for a literal {from}',
    );
  });

  it('asks the deletions stream for its own window start when the source sends its own as {from}', () => {
    const deletions = { url: 'https://api.example.com/deleted' };
    expect(errorsOf({ method: 'POST', body: { gte: '{from}' }, deletions })).toContain(
      'poller "p": source.deletions.from_param: is required unless source.deletions.url, params or body sends the window start as {from}: a request without it would ask for every record every time',
    );
    expect(
      errorsOf({
        method: 'POST',
        body: { gte: '{from}' },
        deletions: { ...deletions, method: 'POST', body: { since: '{from}' } },
      }),
    ).toEqual([]);
  });
});

describe('a window end sent as {to}', () => {
  it('bounds each window of a backlog by max_window, as to_param does', async () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    const entry = load(
      { method: 'POST', time_format: 'unix_ms', body: { gte: '{from}', lt: '{to}' } },
      { max_window: '1h', start_from: new Date(start).toISOString() },
    );
    if (!entry.ok) throw new Error(entry.errors.join('\n'));
    const windows: Window[] = [];
    const context: RunContext = {
      poller: 'p',
      config: entry.config,
      store: new MemoryStore(),
      source: {
        async fetchPage(asked): Promise<PageResult> {
          windows.push(asked);
          return { ok: true, updates: [], malformed: [], next: null };
        },
      },
      deliverer: { deliver: async () => ({ kind: 'delivered' }) },
      now: () => start + 3 * 3_600_000 + 1,
      random: () => 0.5,
    };
    await new PollerEngine(context, { set: async () => {} }).runNow();
    expect(windows[0]).toMatchObject({ from: start, to: start + 3_600_000, bounded: true });
  });
});
