import { describe, expect, it } from 'vitest';
import { loadPoller } from '../../src/config/load.ts';
import { emptyHistogram } from '../../src/engine/lateness-histogram.ts';
import { freshnessRows } from '../../src/http/dashboard/freshness.ts';
import { freshnessView } from '../../src/poller/freshness-view.ts';
import type { PollerStatus } from '../../src/poller/status.ts';

const input = {
  lateness: { last24h: emptyHistogram(), allTime: emptyHistogram(), lastNearMiss: null },
  nudges: { pending: false, since: null, received: 0, coalesced: 0, actedOn: 0, ignored: 0 },
};

/** The poller page's "Observed lateness" for a poller with this config (undefined: it does not load). */
function observed(config: Parameters<typeof freshnessView>[1]): string | undefined {
  const status = { freshness: freshnessView(input, config).view } as PollerStatus;
  return freshnessRows(status).find(([term]) => term === 'Observed lateness')?.[1];
}

describe("the poller page's observed lateness", () => {
  it('says a misconfigured poller has no lag_allowance to speak of, not that it is 0', () => {
    expect(observed(undefined)).toBe('not known: the config does not load (see above)');
  });

  it('says lateness is not measured when lag_allowance and overlap are both 0', () => {
    const entry = loadPoller(
      'p',
      {
        every: '1m',
        source: { url: 'https://api.test/x', from_param: 'since' },
        deliver: { type: 'webhook', url: 'https://receiver.test/', secret: 'a-secret-for-tests' },
      },
      {},
    );
    if (!entry.ok) throw new Error(entry.errors.join('; '));
    expect(observed(entry.config)).toBe(
      'not measured: lag_allowance and overlap are both 0, so no record is read twice',
    );
  });
});
