import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';

/** A minimal valid poller, with overrides. */
function poller(overrides: Record<string, unknown> = {}) {
  return {
    cron: '*/5 * * * *',
    source: { url: 'https://api.example.com/v1/sessions', from_param: 'date_from' },
    deliver: { type: 'handler', name: 'sessions' },
    ...overrides,
  };
}

function errorsOf(raw: unknown, env: Record<string, unknown> = {}): string[] {
  const entry = loadPoller('sessions', raw, env);
  return entry.ok ? [] : entry.errors;
}

describe('a key of the wrong type says what it expects and what it was given', () => {
  const source = { url: 'https://a.example/x', from_param: 'since' };
  const cases: [string, unknown, string][] = [
    [
      'a duration written as a number',
      poller({ lease_ttl: 900 }),
      'poller "sessions": lease_ttl: expected a duration string like "15m", got the number 900',
    ],
    [
      'a fixed query parameter written as a number',
      poller({ source: { ...source, params: { limit: 50 } } }),
      'poller "sessions": source.params.limit: expected a string, got the number 50 (quote it: "50")',
    ],
    [
      'a boolean written as a string',
      poller({ enabled: 'yes' }),
      'poller "sessions": enabled: expected true or false, got the string "yes"',
    ],
    [
      'a table written as a number',
      poller({ source: 7 }),
      'poller "sessions": source: expected a table, got the number 7',
    ],
    [
      'headers written as an array',
      poller({ source: { ...source, headers: ['Authorization: x'] } }),
      'poller "sessions": source.headers: expected a table, got an array',
    ],
    [
      'a whole number written as a fraction',
      poller({ max_attempts: 2.5 }),
      'poller "sessions": max_attempts: expected a whole number, got the number 2.5',
    ],
    [
      'a batch size written as a string',
      poller({ deliver: { type: 'queue', binding: 'Q', batch: '5' } }),
      'poller "sessions": deliver.batch: expected a whole number, got the string "5"',
    ],
    [
      'a time written as a number',
      poller({ start_from: 1767225600 }),
      'poller "sessions": start_from: expected an ISO 8601 time string like "2026-01-01T00:00:00Z", got the number 1767225600',
    ],
    [
      'a size written as a number',
      poller({ source: { ...source, max_body: 1024 } }),
      'poller "sessions": source.max_body: expected a size string like "16MB", got the number 1024',
    ],
    [
      'a choice outside its options',
      poller({ source: { ...source, sorted: 'desc' } }),
      'poller "sessions": source.sorted: expected "asc", got the string "desc"',
    ],
    [
      'a time format that is neither a word nor a pattern, naming the letter',
      poller({ source: { ...source, time_format: 'rfc2822' } }),
      'poller "sessions": source.time_format: "rfc2822" is not one of iso, iso_seconds, unix, unix_ms, nor a pattern: it has an unknown letter "r" (the fields: yyyy MM dd HH mm ss SSS, and X, XX or XXX for the offset; quote other text, as \'T\')',
    ],
    [
      'a delivery type that does not exist',
      poller({ deliver: { type: 'email', to: 'ops@example.com' } }),
      'poller "sessions": deliver.type: expected one of "webhook", "queue", "handler", got the string "email"',
    ],
    [
      'a number below its minimum',
      poller({ deliver: { type: 'queue', binding: 'Q', batch: 0 } }),
      'poller "sessions": deliver.batch: expected at least 1, got the number 0',
    ],
    [
      'a url that is not one',
      poller({ source: { ...source, url: 'not a url' } }),
      'poller "sessions": source.url: expected an http or https URL, got the string "not a url"',
    ],
  ];
  for (const [what, raw, message] of cases) {
    it(`for ${what}`, () => {
      expect(errorsOf(raw)).toContain(message);
    });
  }

  it('still says "is required" for a key that is missing', () => {
    const raw = poller({ source: { from_param: 'since' } });
    expect(errorsOf(raw)).toContain('poller "sessions": source.url: is required');
  });

  it('echoes a string that came from ${NAME} as ${NAME}, even when it is cut short', () => {
    const long = `s3cr3t-${'x'.repeat(120)}`;
    const errors = errorsOf(poller({ enabled: '${FLAG}', max_run: 'soon ${LONG}' }), {
      FLAG: 's3cr3t-flag',
      LONG: long,
    }).join('\n');
    expect(errors).toContain('enabled: expected true or false, got the string "${FLAG}"');
    expect(errors).toContain('max_run: "soon ${LONG}" is not a duration');
    expect(errors).not.toContain('s3cr3t');
  });
});

describe('every error of a poller is listed in one pass', () => {
  it('reports wrong types, the cross-key checks behind them and a bad cron together', () => {
    const errors = errorsOf(
      poller({ cron: 'daily', enabled: 'yes', lease_ttl: '10m', max_run: '10m' }),
    );
    expect(errors).toEqual([
      'poller "sessions": enabled: expected true or false, got the string "yes"',
      expect.stringContaining('poller "sessions": cron: "daily" is not a cron pattern'),
      expect.stringContaining('poller "sessions": lease_ttl: must be greater than max_run'),
    ]);
  });

  it('reports each wrong key once, never again as "is required" once set aside', () => {
    const errors = errorsOf(
      poller({ lease_ttl: 900, source: 7, retries: 3, deliver: { type: 'handler', name: 5 } }),
    );
    expect(errors).toEqual([
      'poller "sessions": lease_ttl: expected a duration string like "15m", got the number 900',
      'poller "sessions": source: expected a table, got the number 7',
      'poller "sessions": deliver.name: expected a string, got the number 5 (quote it: "5")',
      'poller "sessions": retries: unknown key',
    ]);
  });
});

describe('names the fleet routes take', () => {
  it('refuses a static poller named "deletions": /pollers/deletions is the trail', () => {
    const entry = loadPoller('deletions', {}, {});
    expect(entry.ok).toBe(false);
    expect(entry.ok ? [] : entry.errors).toEqual([
      'poller "deletions": "deletions" cannot name a poller: /pollers/deletions is a route',
    ]);
  });
});
