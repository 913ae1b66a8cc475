import { html } from 'hono/html';
import type { RegistryEntry } from '../../registry/registry.ts';
import { reportedLagSeconds } from '../../registry/reported-lag.ts';
import { POLLER_STATES } from './fleet-query.ts';
import { plural, seconds, when } from './format.ts';

/** The overview at `/`, filtered: links keep working when opened in a new tab. */
const filtered = (key: 'label' | 'state', value: string) => `/?${key}=${encodeURIComponent(value)}`;

/** A poller's labels as links that filter the overview by each (`key=value`). */
export function labelList(labels: Record<string, string>) {
  return html`<span class="labels">${Object.entries(labels).map(([key, value]) => {
    const label = `${key}=${value}`;
    return html`<a class="label" href="${filtered('label', label)}" title="${label}" data-filter="label" data-value="${label}">${label}</a> `;
  })}</span>`;
}

/** static (POLLERS) or runtime (PUT /pollers/:name). */
export const kindBadge = (kind: string) => html`<span class="kind ${kind}">${kind}</span>`;

/**
 * The state a list shows for a registry entry: its phase while it is being configured or
 * deleted, else what it last reported ("unknown" before its first report).
 */
export const listedState = (entry: RegistryEntry) =>
  entry.phase === 'active' ? (entry.state ?? 'unknown') : entry.phase;

/**
 * A runtime poller's row: what it last reported to the registry (state, checkpoint, lag, dead
 * letters), read without waking it, with when it reported it. Its runs, lease and next
 * wake-up are on its own page.
 */
export function runtimeRow(
  entry: RegistryEntry,
  now: number,
  pollerPath: string,
  actions: unknown,
) {
  const state = listedState(entry);
  const lag = reportedLagSeconds(entry, now);
  const age =
    entry.reportedAt === null ? null : seconds(Math.max(0, now - entry.reportedAt) / 1000);
  const reported = age === null ? 'not reported yet' : `reported ${age} ago`;
  return html`<tr data-poller="${entry.name}">
    <td class="name"><a href="${pollerPath}"><strong>${entry.name}</strong></a> ${kindBadge('runtime')}
      ${labelList(entry.labels)}</td>
    <td class="current" data-label="State"><span class="state ${state}">${state}</span></td>
    <td class="nowrap mark" data-label="Checkpoint">${entry.checkpoint === null ? '—' : when(new Date(entry.checkpoint).toISOString())}</td>
    <td class="lag" data-label="Lag">${seconds(lag)}${lag === null || age === null ? '' : html` <span class="muted">as of ${age} ago</span>`}</td>
    <td colspan="3" class="muted">${reported} · runs, lease and next wake-up on
      <a href="${pollerPath}">its page</a></td>
    <td class="dead${entry.deadLetters > 0 ? ' warn' : ''}" data-label="Dead letters">
      ${entry.deadLetters > 0 ? html`<a href="${pollerPath}#dead-letters">${entry.deadLetters}</a>` : '0'}
    </td>
    <td class="actions">${actions}</td>
  </tr>`;
}

/** How many pollers the fleet has in each state and of each kind. */
export interface FleetCount {
  state: string | null;
  kind: string;
  count: number;
}

/**
 * "90 pollers (30 static, 60 runtime): 85 ok · 3 failing · …", in the order of the state
 * filter, each state a link that filters by it. A poller that has not reported yet (a static
 * one before the watchdog's first visit) is counted as such: the filter cannot find it.
 */
export function fleetSummary(counts: FleetCount[]) {
  const sum = (pick: (group: FleetCount) => boolean) =>
    counts.filter(pick).reduce((n, group) => n + group.count, 0);
  const total = sum(() => true);
  const kinds = `${sum((group) => group.kind === 'static')} static, ${sum((group) => group.kind === 'runtime')} runtime`;
  const known: readonly string[] = POLLER_STATES;
  const states = [
    ...POLLER_STATES,
    ...new Set(
      counts.flatMap(({ state }) => (state === null || known.includes(state) ? [] : [state])),
    ),
  ];
  const parts = states.flatMap((state) => {
    const count = sum((group) => group.state === state);
    if (count === 0) return [];
    const text = html`<span class="state ${state}">${state}</span> ${count}`;
    // Only the states the filter knows are links (a newer poller may report one it does not).
    if (!known.includes(state)) return [text];
    return [
      html`<a href="${filtered('state', state)}" data-filter="state" data-value="${state}">${text}</a>`,
    ];
  });
  const unreported = sum((group) => group.state === null);
  if (unreported > 0) parts.push(html`<span class="muted">not reported yet ${unreported}</span>`);
  return html`<p class="fleet-summary">${plural(total, 'poller')} (${kinds})${parts.length > 0 ? ':' : ''}
    ${parts.map((part, index) => html`${index > 0 ? ' · ' : ''}${part}`)}</p>`;
}
