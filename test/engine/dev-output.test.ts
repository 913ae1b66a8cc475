import { describe, expect, it } from 'vitest';
import { createDevOutputFilter } from '../../scripts/dev-output.ts';
import transcript from '../support/wrangler-dev-output.txt?raw';

/** What npm start prints of these lines of wrangler dev's output. */
function shown(lines: string[], options: { verbose?: boolean } = {}): string[] {
  const filter = createDevOutputFilter({
    ...options,
    now: () => Date.parse('2026-11-30T10:00:10Z'),
  });
  return lines.flatMap((line) => filter(line) ?? []);
}

const LINES = transcript.split('\n');

describe('npm start is quiet by default', () => {
  it('shows an error, and none of the banner, bindings tables, request log or advice to fire crons by hand', () => {
    expect(shown(LINES)).toEqual([
      "✘ [ERROR] Uncaught TypeError: Cannot read properties of undefined (reading 'id')",
    ]);
  });

  it('turns a run log line into one line a person reads', () => {
    const run = {
      event: 'run',
      poller: 'demo_sessions',
      outcome: 'success',
      records: 116,
      checkpoint: '2026-11-30T10:00:05.000Z',
    };
    expect(shown([JSON.stringify(run)])).toEqual([
      'run  demo_sessions    success    records  116  checkpoint 2026-11-30T10:00:05.000Z  lag 5s',
    ]);
  });

  it('says how many records a run dead-lettered, next to those it delivered', () => {
    const run = {
      event: 'run',
      poller: 'demo_sessions',
      outcome: 'success',
      records: 0,
      deadLettered: 37,
      checkpoint: '2026-11-30T10:00:05.000Z',
    };
    expect(shown([JSON.stringify(run)])).toEqual([
      'run  demo_sessions    success    records    0  dead-lettered 37  checkpoint 2026-11-30T10:00:05.000Z  lag 5s',
    ]);
  });

  it('shortens a long error at spaces, keeping both ends whole', () => {
    const error = `poller "demo_sessions": page 1: GET https://demo.tidemark.internal/demo/sessions?date_from=2026-11-30T09%3A59%3A00.000Z&limit=50&cursor=${'x'.repeat(60)}: HTTP 503; body "upstream unavailable"`;
    const line =
      shown([
        JSON.stringify({
          event: 'run',
          poller: 'p',
          outcome: 'failed',
          records: 0,
          checkpoint: null,
          error,
        }),
      ])[0] ?? '';
    const shownError = /\((.*)\)$/.exec(line)?.[1] ?? '';
    expect(shownError.length).toBeLessThanOrEqual(163);
    expect(shownError).toMatch(
      /^poller "demo_sessions": page 1: GET \S+ … \S*: HTTP 503; body "upstream unavailable"$/,
    );
  });

  it('shows a nudge that wants a run, and an admin action such as a delete, as a line each', () => {
    const nudge = {
      event: 'nudge',
      poller: 'demo_sessions',
      outcome: 'scheduled',
      run_at: '2026-11-30T10:00:11.000Z',
    };
    const deleted = {
      event: 'admin',
      poller: 'acme-tickets',
      action: 'poller.deleted',
      detail: { reason: 'customer left' },
    };
    expect(shown([JSON.stringify(nudge), JSON.stringify(deleted)])).toEqual([
      'nudge  demo_sessions    scheduled  run at 2026-11-30T10:00:11.000Z',
      'admin  acme-tickets     poller.deleted  {"reason":"customer left"}',
    ]);
  });

  it('keeps the line right after a bindings table', () => {
    const table = LINES.slice(
      LINES.indexOf('Your Worker has access to the following bindings:'),
      LINES.findIndex((line) => line.startsWith('env.WEBHOOK_SECRET')) + 1,
    );
    expect(table.length).toBeGreaterThan(3);
    expect(shown([...table, '▲ [WARNING] a warning of the Worker'])).toEqual([
      '▲ [WARNING] a warning of the Worker',
    ]);
  });

  it('shows everything with --verbose', () => {
    expect(shown(LINES, { verbose: true })).toEqual(LINES);
  });
});
