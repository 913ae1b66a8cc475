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
