import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { Window } from '../../src/engine/window.ts';
import { deletionsSource, listingSource } from '../../src/sources/derived-sources.ts';
import { fetchRecordById } from '../../src/sources/fetch-record.ts';
import { HttpSource } from '../../src/sources/http-source.ts';

/**
 * A request body beside the main stream: the deletions stream, the reconciliation's listing
 * and reconcile.fetch each send their own `method` and `body`; a secret in a body is redacted
 * as a header's is; a POST is never turned into a GET by a redirect.
 */

const FROM = Date.parse('2026-03-01T10:00:00.000Z');
const TO = Date.parse('2026-03-01T11:00:00.000Z');
const window: Window = { from: FROM, to: TO, bounded: true, startedAt: TO, cut: false };
const SECRET = 'body-secret-value-123';

function configOf(raw: Record<string, unknown>) {
  const entry = loadPoller(
    'p',
    { cron: '* * * * *', deliver: { type: 'handler', name: 'x' }, ...raw },
    { KEY: SECRET },
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return { config: entry.config, secrets: entry.secrets };
}

/** A fetch that keeps each request (method, URL, body) and answers with `answer`. */
function recorder(answer: (request: Request, body: string) => Response) {
  const seen: { method: string; url: string; body: string }[] = [];
  const fetcher = async (request: Request) => {
    const body = await request.text();
    seen.push({ method: request.method, url: request.url, body });
    return answer(request, body);
  };
  return { seen, fetcher };
}

const empty = () => Response.json({ items: [] });

const source = {
  url: 'https://api.example.com/search',
  method: 'POST',
  body: { since: '{from}', token: '${KEY}' },
  items: 'items',
};

describe('method and body beside the main stream', () => {
  it('sends the deletions stream its own POST body with its window, not the source body', async () => {
    const { config, secrets } = configOf({
      source: {
        ...source,
        deletions: {
          url: 'https://api.example.com/deleted',
          method: 'POST',
          body: { deleted_after: '{from}' },
        },
      },
    });
    const deletions = deletionsSource(config.source);
    if (deletions === null) throw new Error('no deletions stream');
    const { seen, fetcher } = recorder(empty);
    await new HttpSource(deletions, fetcher, secrets, () => TO).fetchPage(window, null);
    expect(seen).toEqual([
      {
        method: 'POST',
        url: 'https://api.example.com/deleted',
        body: JSON.stringify({ deleted_after: '2026-03-01T10:00:00.000Z' }),
      },
    ]);
  });

  it('sends the listing its own POST body, with no window start', async () => {
    const { config, secrets } = configOf({
      source: { ...source },
      reconcile: {
        every: '1h',
        url: 'https://api.example.com/all',
        method: 'POST',
        body: { archived: false },
      },
    });
    const listing = listingSource(config);
    if (listing === null) throw new Error('no listing');
    const { seen, fetcher } = recorder(empty);
    const open: Window = { from: 0, to: TO, bounded: false, startedAt: TO, cut: false };
    await new HttpSource(listing, fetcher, secrets, () => TO).fetchPage(open, null);
    expect(seen).toEqual([
      { method: 'POST', url: 'https://api.example.com/all', body: '{"archived":false}' },
    ]);
  });

  it('fetches a record by id with a POST whose body holds the id', async () => {
    const { config, secrets } = configOf({
      source: { ...source },
      reconcile: {
        every: '1h',
        url: 'https://api.example.com/all',
        fetch: {
          url: 'https://api.example.com/graphql',
          method: 'POST',
          body: { query: 'query($id: ID!) { issue(id: $id) { id } }', variables: { id: '{id}' } },
        },
      },
    });
    const fetch = config.reconcile?.fetch;
    if (fetch === undefined) throw new Error('no fetch');
    const { seen, fetcher } = recorder((_request, body) =>
      body.includes('"gone"') ? new Response('', { status: 404 }) : Response.json({ id: 'a"1' }),
    );
    const byId = fetchRecordById(fetch, config.source, fetcher, secrets);
    expect(await byId('a"1')).toEqual({ ok: true, record: { id: 'a"1' } });
    expect(await byId('gone')).toEqual({ ok: true, record: null });
    expect(seen[0]?.method).toBe('POST');
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({
      query: 'query($id: ID!) { issue(id: $id) { id } }',
      variables: { id: 'a"1' },
    });
  });

  it('refuses a reconcile.fetch table with {id} neither in its path nor in its body', () => {
    const entry = loadPoller(
      'p',
      {
        cron: '* * * * *',
        deliver: { type: 'handler', name: 'x' },
        source: { url: 'https://api.example.com/x', from_param: 'since' },
        reconcile: {
          every: '1h',
          url: 'https://api.example.com/all',
          fetch: { url: 'https://api.example.com/graphql', method: 'POST', body: { q: 1 } },
        },
      },
      {},
    );
    expect(entry.ok ? [] : entry.errors.join('\n')).toContain(
      'reconcile.fetch.url: must be a URL with {id} in it (e.g. "https://api.example.com/tickets/{id}"), or {id} in body',
    );
  });
});

describe('a secret in a body', () => {
  it('is redacted from the error of a page whose upstream echoes the body back', async () => {
    const { config, secrets } = configOf({ source: { ...source } });
    const { fetcher } = recorder((_request, body) => new Response(body, { status: 400 }));
    const page = await new HttpSource(config.source, fetcher, secrets, () => TO).fetchPage(
      window,
      null,
    );
    expect(page.ok).toBe(false);
    const error = page.ok ? '' : page.error;
    expect(error).toContain('POST https://api.example.com/search: HTTP 400');
    expect(error).toContain('***');
    expect(error).not.toContain(SECRET);
  });

  it('is redacted as the JSON of the body wrote it, escapes and all', async () => {
    const quoted = 'pa"ss\\word-4567';
    const entry = loadPoller(
      'p',
      { cron: '* * * * *', deliver: { type: 'handler', name: 'x' }, source: { ...source } },
      { KEY: quoted },
    );
    if (!entry.ok) throw new Error(entry.errors.join('\n'));
    const { fetcher } = recorder((_request, body) => new Response(body, { status: 400 }));
    const http = new HttpSource(entry.config.source, fetcher, entry.secrets, () => TO);
    const page = await http.fetchPage(window, null);
    const error = page.ok ? '' : page.error;
    expect(error).toContain('token');
    expect(error).not.toContain('word-4567');
  });

  it('is redacted from a page error whose upstream echoes it as PHP does, slashes escaped', async () => {
    const key = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCY';
    const entry = loadPoller(
      'p',
      { cron: '* * * * *', deliver: { type: 'handler', name: 'x' }, source: { ...source } },
      { KEY: key },
    );
    if (!entry.ok) throw new Error(entry.errors.join('\n'));
    // json_encode writes "/" as "\/".
    const { fetcher } = recorder(
      (_request, body) => new Response(body.replaceAll('/', '\\/'), { status: 400 }),
    );
    const http = new HttpSource(entry.config.source, fetcher, entry.secrets, () => TO);
    const page = await http.fetchPage(window, null);
    const error = page.ok ? '' : page.error;
    // The snippet shows the body as a JSON string: its quotes escaped.
    expect(error).toContain('token\\":\\"***\\"');
    expect(error).not.toContain('K7MDENG');
  });
});

describe('a redirect of a POST', () => {
  it('is not followed when it would turn the POST into a GET (301, 302, 303)', async () => {
    const { config, secrets } = configOf({ source: { ...source } });
    for (const status of [301, 302, 303]) {
      const { seen, fetcher } = recorder(
        () =>
          new Response(null, { status, headers: { location: 'https://api.example.com/moved' } }),
      );
      const page = await new HttpSource(config.source, fetcher, secrets, () => TO).fetchPage(
        window,
        null,
      );
      expect(page).toMatchObject({ ok: false, kind: 'misconfigured' });
      expect(page.ok ? '' : page.error).toContain('would turn the POST into a GET');
      expect(seen).toHaveLength(1);
    }
  });

  it('is followed with its method and body by a 307 or 308', async () => {
    const { config, secrets } = configOf({ source: { ...source } });
    const { seen, fetcher } = recorder((request) =>
      request.url.endsWith('/search')
        ? new Response(null, { status: 307, headers: { location: '/moved' } })
        : empty(),
    );
    const page = await new HttpSource(config.source, fetcher, secrets, () => TO).fetchPage(
      window,
      null,
    );
    expect(page).toMatchObject({ ok: true });
    expect(seen.map((request) => request.method)).toEqual(['POST', 'POST']);
    expect(seen[1]?.body).toBe(seen[0]?.body);
  });
});
