import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import type { SourceConfig } from '../../src/config/schema.ts';
import { HttpSource } from '../../src/sources/http-source.ts';

const FROM = Date.parse('2026-03-01T10:00:00Z');
const window = { from: FROM, to: FROM + 60_000, bounded: true, startedAt: FROM, cut: false };

describe("an upstream that workerd's own fetch cannot reach", () => {
  // A closed port on this machine's loopback: refused at once, with no network involved.
  it('a refused connection names the host, not "Network connection lost."', async () => {
    const entry = loadPoller(
      'p',
      {
        cron: '* * * * *',
        source: { url: 'http://127.0.0.1:1/items', from_param: 'since', timeout: '10s' },
        deliver: { type: 'handler', name: 'x' },
      },
      {},
    );
    if (!entry.ok) throw new Error(entry.errors.join('\n'));
    const source = new HttpSource(
      entry.config.source as SourceConfig,
      (request) => fetch(request),
      entry.secrets,
      () => FROM,
    );
    const page = await source.fetchPage(window, null);
    expect(page).toMatchObject({ ok: false, kind: 'transient' });
    expect(page.ok ? '' : page.error).toContain('connection refused (or lost) by 127.0.0.1:1');
  });
});
