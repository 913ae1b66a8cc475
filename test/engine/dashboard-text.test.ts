import { describe, expect, it } from 'vitest';
import { auditSentence } from '../../src/http/dashboard/audit.ts';
import { runChart } from '../../src/http/dashboard/chart.ts';
import { runTable } from '../../src/http/dashboard/run-table.ts';
import type { RunView } from '../../src/poller/status.ts';

const MINUTE = 60_000;
const LONG_ERROR =
  'poller "orders": page 1: GET https://api.test/items?since=2026-01-01T11%3A00%3A00.000Z: HTTP 503; body "upstream down: the cluster is being moved to new hardware; every request is refused until the move is over (end)"';

function run(minutesAgo: number, outcome: string, lagSeconds: number, error: string | null = null) {
  const finished = Date.UTC(2026, 0, 1, 12, 0) - minutesAgo * MINUTE;
  return {
    id: 100 - minutesAgo,
    epoch: 1,
    trigger: 'cron',
    outcome,
    started_at: new Date(finished - 1000).toISOString(),
    finished_at: new Date(finished).toISOString(),
    windows: 1,
    pages: 1,
    records: 1,
    dead_lettered: 0,
    error,
    checkpoint: new Date(finished - lagSeconds * 1000).toISOString(),
  } satisfies RunView;
}

/** Tags stripped, whitespace folded. */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe("the run history's errors", () => {
  it("puts a failed run's error on a row of its own under the run, decoded, cut, the whole of it in the fold", async () => {
    const html = (
      await runTable([run(0, 'success', 5), run(5, 'failed', 300, LONG_ERROR)])
    ).toString();
    expect(html).not.toContain('<th>Error</th>');
    const rows = html.match(/<tr class="run[^"]*"/g);
    expect(rows).toEqual([
      '<tr class="run success"',
      '<tr class="run failed"',
      '<tr class="run-error failed"',
    ]);
    const errorRow = html.slice(html.indexOf('<tr class="run-error failed"'));
    expect(errorRow).toContain('colspan="10"');
    expect(errorRow).not.toContain('%3A');
    const cut = (/<span class="cut">([^<]*)<\/span>/.exec(errorRow)?.[1] ?? '').replaceAll(
      '&quot;',
      '"',
    );
    expect(cut).toContain('since=2026-01-01T11:00:00.000Z');
    expect(cut).not.toContain('(end)');
    expect(cut.length).toBeLessThanOrEqual(162);
    expect(text(/<p class="full">([\s\S]*?)<\/p>/.exec(errorRow)?.[1] ?? '')).toBe(
      text(LONG_ERROR.replaceAll('%3A', ':').replaceAll('"', '&quot;')),
    );
    expect(errorRow).toContain('data-keep="run-error-95"');
  });

  it('shows a short error whole, and leaves a % that encodes nothing as it is', async () => {
    const html = (await runTable([run(0, 'failed', 5, 'HTTP 500 at 100%: a%2Fb')])).toString();
    expect(html).not.toContain('<details');
    expect(html).toContain('HTTP 500 at 100%: a/b');
  });
});

describe("the run history's child requests", () => {
  it("shows how many of a run's pages were for children, and nothing for a poller without them", async () => {
    const children = { ...run(0, 'success', 5), pages: 7, child_requests: 5 };
    const html = (await runTable([children, run(5, 'success', 5)])).toString();
    const rows = html.split('<tr class="run ').slice(1);
    expect(text(rows[0] ?? '')).toContain('7 (5 children)');
    expect(rows[0]).toContain('title="5 of them for children (source.children)"');
    expect(rows[1]).not.toContain('children');
  });
});

describe("the lag chart's axis", () => {
  const lagTicks = (svg: string) =>
    [...svg.matchAll(/<text class="tick lag-tick"[^>]*>([^<]+)<\/text>/g)].map((match) => match[1]);

  it('fits the lag observed when it stays far below alert_after, and names alert_after above the plot', async () => {
    const svg = (
      await runChart([run(0, 'success', 8), run(1, 'success', 4)], 30 * MINUTE)
    ).toString();
    expect(lagTicks(svg)).toEqual(['0s', '5s', '10s']);
    expect(svg).toContain('<g class="threshold above">');
    expect(svg).toContain('alert_after 30m: far above this lag');
    expect(svg).not.toMatch(/<g class="threshold"><line/);
  });

  it('reaches alert_after, with its line, once the lag came within half of it', async () => {
    const svg = (
      await runChart([run(0, 'success', 20), run(10, 'failed', 16 * 60)], 30 * MINUTE)
    ).toString();
    expect(lagTicks(svg)).toEqual(['0s', '30m', '1h']);
    expect(svg).toMatch(/<g class="threshold"><line/);
  });
});

describe('the audit log in words', () => {
  it('says each action as a sentence, and one it has none for as key-value words, never JSON', () => {
    const at = '2026-01-01T12:00:00.000Z';
    expect(auditSentence({ at, action: 'reconcile.requested', detail: {} })).toBe(
      'listing requested (Reconcile now)',
    );
    expect(auditSentence({ at, action: 'reconcile.confirmed', detail: { deletes: 3 } })).toBe(
      '3 held deletes confirmed and delivered',
    );
    expect(
      auditSentence({
        at,
        action: 'secret.set',
        detail: { name: 'API_KEY', replaced: true, origins: ['https://api.test'] },
      }),
    ).toBe('secret API_KEY replaced, sent only to https://api.test');
    const unknown = auditSentence({
      at,
      action: 'poller.previewed',
      detail: { pages: 3, window: { from: 'a', to: 'b' }, ids: ['x', 'y'] },
    });
    expect(unknown).toBe('poller previewed: pages 3, window (from a, to b), ids x, y');
    expect(unknown).not.toMatch(/[{}"]/);
  });
});
