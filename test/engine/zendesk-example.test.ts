import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';
import { parseDuration } from '../../src/config/duration.ts';
import { ZENDESK_LAG_ALLOWANCE } from '../support/pollers.ts';

/** A poller of Zendesk's incremental export, by its URL. */
const ZENDESK_EXPORT = /\.zendesk\.com\/api\/v2\/incremental\//;
/** What the export leaves out: the changes of the last minute. */
const MINUTE = 60_000;

describe("Zendesk's incremental export leaves out the last minute's changes", () => {
  it('each Zendesk poller of examples/wrangler.toml keeps its checkpoint a minute or more behind, with the lag_allowance the tests run their fake Zendesk with', () => {
    const config = unstable_readConfig({ config: 'examples/wrangler.toml' });
    const pollers = (config.vars as { POLLERS: Record<string, Record<string, unknown>> }).POLLERS;
    const zendesk = Object.entries(pollers).filter(([, poller]) =>
      ZENDESK_EXPORT.test(String((poller.source as { url?: unknown }).url)),
    );
    expect(zendesk.map(([name]) => name)).toEqual(['zendesk_tickets']);
    for (const [, poller] of zendesk) {
      expect(parseDuration(String(poller.lag_allowance ?? '0s'))).toBeGreaterThanOrEqual(MINUTE);
      // test/workers/apis.test.ts proves that this value loses no ticket of the last minute.
      expect(poller.lag_allowance).toBe(ZENDESK_LAG_ALLOWANCE);
    }
  });

  it('each Zendesk config the docs show sets lag_allowance to a minute or more', () => {
    const pages = ['README.md', ...readdirSync('docs').map((file) => `docs/${file}`)].filter(
      (path) => path.endsWith('.md'),
    );
    const blocks = pages.flatMap((path) =>
      readFileSync(path, 'utf8')
        .split('```')
        .filter((_, i) => i % 2 === 1)
        .filter((block) => ZENDESK_EXPORT.test(block))
        .map((block) => ({ path, block })),
    );
    expect(blocks.length).toBeGreaterThan(0);
    for (const { path, block } of blocks) {
      const lag = /lag_allowance"?\s*[=:]\s*"([^"]+)"/.exec(block)?.[1] ?? '0s';
      expect(parseDuration(lag), `${path}: ${block.slice(0, 80)}`).toBeGreaterThanOrEqual(MINUTE);
    }
  });
});
