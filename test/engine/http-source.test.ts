import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { SourceConfig } from '../../src/config/schema.ts';
import { HttpSource } from '../../src/sources/http-source.ts';
import { readRateLimit } from '../../src/sources/rate-limit.ts';
import { formatTime, parseTimestamp } from '../../src/sources/time.ts';

const FROM = Date.parse('2026-03-01T10:00:00.750Z');
const TO = Date.parse('2026-03-01T11:00:00.000Z');

function source(
  overrides: Record<string, unknown>,
  respond: (request: Request) => Response | Promise<Response>,
) {
  const entry = loadPoller(
    'p',
    {
      cron: '* * * * *',
      source: { url: 'https://api.example.com/v1/items', from_param: 'since', ...overrides },
      deliver: { type: 'handler', name: 'x' },
    },
    { TOKEN: 'sekrit-token' },
  );
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  const requests: Request[] = [];
  const http = new HttpSource(
    entry.config.source as SourceConfig,
    async (request) => {
      requests.push(request);
      return respond(request);
    },
    entry.secrets,
    () => FROM,
  );
  return { http, requests };
}

const window = { from: FROM, to: TO, bounded: true, startedAt: TO, cut: false };

describe('time formats', () => {
  it('formats window bounds, flooring to the unit and never rounding up', () => {
    expect(formatTime(FROM, 'iso')).toBe('2026-03-01T10:00:00.750Z');
    expect(formatTime(FROM, 'unix')).toBe(String(Math.floor(FROM / 1000)));
    expect(formatTime(FROM, 'unix_ms')).toBe(String(FROM));
  });

  it('reads updated_at as ISO 8601 with Z or an offset, or epoch seconds or milliseconds', () => {
    expect(parseTimestamp('2026-03-01T10:00:00Z')).toBe(Date.parse('2026-03-01T10:00:00Z'));
    expect(parseTimestamp('2026-03-01T12:00:00.5+02:00')).toBe(
      Date.parse('2026-03-01T10:00:00.500Z'),
    );
    expect(parseTimestamp(1_772_359_200)).toBe(1_772_359_200_000);
    expect(parseTimestamp(1_772_359_200_123)).toBe(1_772_359_200_123);
    expect(parseTimestamp('1772359200')).toBe(1_772_359_200_000);
    for (const bad of ['2026-03-01', 'yesterday', '', null, undefined, {}, Number.NaN]) {
      expect(parseTimestamp(bad)).toBeUndefined();
    }
  });

  it('reads the canonical form (YYYY-MM-DDTHH:MM:SS.sssZ) exactly as Date.parse does, valid or not', () => {
    const general = (text: string) => {
      const ms = Date.parse(text);
      return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(text) &&
        !Number.isNaN(ms)
        ? ms
        : undefined;
    };
    const pair = (max: number) =>
      fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const canonical = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
        pair(14),
        pair(33),
        pair(25),
        pair(61),
        pair(61),
        fc.integer({ min: 0, max: 999 }).map((n) => String(n).padStart(3, '0')),
      )
      .map(([y, mo, d, h, mi, s, ms]) => `${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}Z`);
    // And the same shape with any one character replaced.
    const mangled = fc
      .tuple(canonical, fc.nat(23), fc.constantFrom('x', ' ', '9', '-', ':', '.', 'Z', '+'))
      .map(([text, at, char]) => text.slice(0, at) + char + text.slice(at + 1));
    fc.assert(
      fc.property(fc.oneof(canonical, mangled), (text) => {
        expect(parseTimestamp(text)).toBe(general(text));
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('HttpSource requests', () => {
  it('sends from (and to when bounded) in the configured format, with params and headers', async () => {
    const { http, requests } = source(
      {
        to_param: 'until',
        time_format: 'unix',
        params: { per_page: '100' },
        headers: { Authorization: 'Bearer ${TOKEN}' },
      },
      () => Response.json([]),
    );
    await http.fetchPage(window, null);
    const url = new URL(requests[0]?.url ?? '');
    expect(url.searchParams.get('since')).toBe(String(Math.floor(FROM / 1000)));
    expect(url.searchParams.get('until')).toBe(String(TO / 1000));
    expect(url.searchParams.get('per_page')).toBe('100');
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer sekrit-token');
  });

  it('leaves `to` out of an open window', async () => {
    const { http, requests } = source({ to_param: 'until' }, () => Response.json([]));
    await http.fetchPage({ ...window, bounded: false }, null);
    expect(new URL(requests[0]?.url ?? '').searchParams.has('until')).toBe(false);
  });

  it('follows a cursor until it is null, and stops on an empty page even with a cursor', async () => {
    const pages = [
      { items: [{ id: 1, updated_at: '2026-03-01T10:00:01Z' }], next: 'c2' },
      { items: [{ id: 2, updated_at: '2026-03-01T10:00:02Z' }], next: null },
      { items: [], next: 'c9' },
    ];
    const { http, requests } = source(
      { items: 'items', next: { type: 'cursor', param: 'cursor', path: 'next' } },
      () => Response.json(pages[requests.length - 1]),
    );
    const first = await http.fetchPage(window, null);
    expect(first).toMatchObject({ ok: true, next: 'c2' });
    expect(first.ok && first.updates[0]).toMatchObject({
      id: '1',
      version: '2026-03-01T10:00:01Z',
    });
    expect(await http.fetchPage(window, 'c2')).toMatchObject({ ok: true, next: null });
    expect(new URL(requests[1]?.url ?? '').searchParams.get('cursor')).toBe('c2');
    expect(await http.fetchPage(window, 'c3')).toMatchObject({ ok: true, next: null, updates: [] });
  });

  it('honours stop and more paths', async () => {
    const { http } = source(
      { items: 'data', next: { type: 'cursor', param: 'c', path: 'cursor', more: 'has_more' } },
      () => Response.json({ data: [{ id: 'a', updated_at: 1 }], cursor: 'x', has_more: false }),
    );
    expect(await http.fetchPage(window, null)).toMatchObject({ ok: true, next: null });
  });

  it('reports a timeout as a transient failure, without the secret', async () => {
    const { http } = source({ params: { key: '${TOKEN}' } }, () => {
      throw Object.assign(new Error('The operation was aborted due to timeout'), {
        name: 'TimeoutError',
      });
    });
    const page = await http.fetchPage(window, null);
    expect(page).toMatchObject({ ok: false, kind: 'transient' });
    expect(!page.ok && page.error).toContain('timed out');
    expect(!page.ok && page.error).toContain('key=***');
    expect(JSON.stringify(page)).not.toContain('sekrit-token');
  });

  it('turns records without an id or with a bad updated_at into malformed records, not updates', async () => {
    const { http } = source({}, () =>
      Response.json([
        { updated_at: '2026-03-01T10:00:00Z' },
        { id: 'b', updated_at: 'soon' },
        { id: 'c', updated_at: 5 },
      ]),
    );
    const page = await http.fetchPage(window, null);
    expect(page.ok && page.updates.map((u) => u.id)).toEqual(['c']);
    expect(page.ok && page.malformed.map((m) => m.reason)).toEqual([
      'no id at "id"',
      'id b: updated_at at "updated_at" is "soon", not an ISO 8601 time or epoch number',
    ]);
  });
});

describe('HttpSource: empty pages mid-stream and secrets in messages', () => {
  it('follows the cursor past an empty page when the body says more is coming', async () => {
    const { http } = source(
      { items: 'items', next: { type: 'cursor', param: 'c', path: 'next', more: 'has_more' } },
      () => Response.json({ items: [], next: 'k2', has_more: true }),
    );
    expect(await http.fetchPage(window, null)).toMatchObject({ ok: true, next: 'k2' });
  });

  it('redacts a secret however the URL encoded it, and before cutting the body snippet', async () => {
    const entry = loadPoller(
      'p',
      {
        cron: '* * * * *',
        source: {
          url: 'https://api.example.com/x',
          from_param: 'since',
          params: { api_key: '${KEY}' },
        },
        deliver: { type: 'handler', name: 'x' },
      },
      { KEY: 'ab+cd/ef= gh' },
    );
    if (!entry.ok) throw new Error(entry.errors.join('\n'));
    const echo = `${'x'.repeat(190)}ab+cd/ef= gh`;
    const http = new HttpSource(
      entry.config.source,
      async () => new Response(echo, { status: 500 }),
      entry.secrets,
      () => FROM,
    );
    const page = await http.fetchPage(window, null);
    const error = page.ok ? '' : page.error;
    expect(error).toContain('api_key=***');
    expect(error).not.toMatch(/ab(\+|%2B)cd/);
    expect(error).not.toContain('ab+c'); // not even the half before the snippet's cut
  });
});

describe('next page URLs', () => {
  // "Says more but gives no way on", for every style: test/engine/paging-styles.test.ts.
  it('a next URL that does not parse is a bad response, not an exception', async () => {
    const { http } = source({ items: 'items', next: { type: 'url', path: 'next_page' } }, () =>
      Response.json({ items: [{ id: 1, updated_at: 1 }], next_page: 'https://exa mple.com/' }),
    );
    const page = await http.fetchPage(window, null);
    expect(page).toMatchObject({ ok: false, kind: 'bad_response' });
    expect(!page.ok && page.error).toContain('does not parse');
  });
});

describe('rate-limit hints', () => {
  const NOW = Date.parse('2026-03-01T10:00:00Z');
  const HOUR = 3_600_000;
  const hint = (headers: Record<string, string>, maxWait = HOUR) =>
    readRateLimit(new Headers(headers), NOW, maxWait);

  it('reads delta seconds, HTTP dates, epoch seconds and epoch milliseconds', () => {
    expect(hint({ 'retry-after': '30' }).notBefore).toBe(NOW + 30_000);
    expect(hint({ 'retry-after': 'Sun, 01 Mar 2026 10:05:00 GMT' }).notBefore).toBe(NOW + 300_000);
    const spent = { 'x-ratelimit-remaining': '0' };
    expect(hint({ ...spent, 'x-ratelimit-reset': String(NOW / 1000 + 60) }).notBefore).toBe(
      NOW + 60_000,
    );
    expect(hint({ ...spent, 'x-ratelimit-reset': String(NOW + 90_000) }).notBefore).toBe(
      NOW + 90_000,
    );
    expect(hint({ 'ratelimit-remaining': '0', 'ratelimit-reset': '15' }).notBefore).toBe(
      NOW + 15_000,
    );
    expect(hint({ 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': '20' })).toMatchObject({
      exhausted: true,
      notBefore: NOW + 20_000,
    });
  });

  it('cuts any wait to max_rate_limit_wait, and says so', () => {
    const far = hint({ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' });
    expect(far.notBefore).toBe(NOW + HOUR);
    expect(far.notes[0]).toContain('beyond max_rate_limit_wait');
    expect(hint({ 'retry-after': '7200' }, 10 * 60_000).notBefore).toBe(NOW + 10 * 60_000);
  });

  it('ignores garbage, and says so', () => {
    for (const value of ['99999999999999999999', 'soon', '-5', '', '1e400']) {
      const read = hint({ 'retry-after': value });
      expect(read.notBefore).toBeUndefined();
      expect(read.notes[0]).toContain('ignored retry-after');
    }
  });

  it('takes a time already past as now, never as a time before it', () => {
    expect(hint({ 'retry-after': 'Sun, 01 Mar 2026 09:00:00 GMT' }).notBefore).toBe(NOW);
  });
});

describe('a page request the run no longer wants', () => {
  it('is aborted when its cancel signal fires, and answers without waiting for the upstream', async () => {
    let aborted: AbortSignal | undefined;
    const { http } = source({}, (request) => {
      aborted = request.signal;
      // An upstream that never answers: only the cancel ends this request.
      return new Promise<Response>((_resolve, reject) => {
        request.signal.addEventListener('abort', () => reject(request.signal.reason));
      });
    });
    const cancel = new AbortController();
    const page = http.fetchPage(window, null, cancel.signal);
    await new Promise((resolve) => setTimeout(resolve, 5));
    cancel.abort(new DOMException('the window ended', 'AbortError'));
    expect((await page).ok).toBe(false);
    expect(aborted?.aborted).toBe(true);
  });
});
