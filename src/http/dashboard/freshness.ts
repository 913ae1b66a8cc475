import type { PollerStatus } from '../../poller/status.ts';
import { plural } from './format.ts';

/**
 * The poller page's freshness facts: the lateness measured in the last 24 h next to
 * lag_allowance (docs/freshness.md, "Observed lateness"), and what became of the nudges it received.
 */
export function freshnessRows(status: PollerStatus): [string, string][] {
  const freshness = status.freshness;
  if (freshness === null) return [];
  const { lateness, nudges } = freshness;
  const recent = lateness.last_24h;
  const against = `lag_allowance ${freshness.lag_allowance ?? '?'}`;
  // A poller whose config does not load has no lag_allowance to speak of (not 0).
  const observed =
    freshness.lag_allowance === null
      ? 'not known: the config does not load (see above)'
      : !lateness.measurable
        ? 'not measured: lag_allowance and overlap are both 0, so no record is read twice'
        : recent.count === 0
          ? `no late record in the last 24 h (${against})`
          : `p50 ${recent.p50_seconds} s, p99 ${recent.p99_seconds} s, max ${recent.max_seconds} s over the last 24 h (${plural(recent.count, 'late record')}), against ${against}${lateness.ratio === null ? '' : ` (${Math.round(lateness.ratio * 100)}%)`}; suggested: ${lateness.suggested_lag_allowance}${recent.near_misses > 0 ? `; ${recent.near_misses} near miss${recent.near_misses === 1 ? '' : 'es'}` : ''}`;
  const pending = nudges.pending ? `; one pending since ${nudges.pending_since}` : '';
  return [
    ['Observed lateness', observed],
    [
      'Nudges',
      `${nudges.received} received: ${nudges.acted_on} acted on, ${nudges.coalesced} coalesced, ${nudges.ignored} ignored${pending}`,
    ],
  ];
}
