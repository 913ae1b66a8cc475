import { html } from 'hono/html';
import type { PollerStatus, RunView } from '../../poller/status.ts';
import type { RegistryEntry } from '../../registry/registry.ts';
import { type AuditEntry, auditList } from './audit.ts';
import { runChart } from './chart.ts';
import { errorText } from './error-text.ts';
import { lastRealRun, nextWakeup, type PollerFacts } from './explain.ts';
import { type FleetCount, fleetSummary, kindBadge, labelList, runtimeRow } from './fleet-rows.ts';
import { plural, relative, seconds, when } from './format.ts';

/**
 * One row of the overview: a static poller read live (its status and recent runs), or a
 * runtime poller as it last reported itself to the registry.
 */
export type OverviewRow =
  | {
      kind: 'static';
      entry: RegistryEntry;
      status: PollerStatus;
      runs: RunView[];
      facts: PollerFacts;
    }
  | { kind: 'runtime'; entry: RegistryEntry };

export type StaticRow = Extract<OverviewRow, { kind: 'static' }>;

/** One page of the overview. */
export interface OverviewPage {
  /** Problems with POLLERS as a whole. */
  errors: string[];
  rows: OverviewRow[];
  /** Where the next page starts; null on the last one. */
  nextCursor: string | null;
  /** The whole fleet, by state and kind. */
  counts: FleetCount[];
  limit: number;
}

export type { FleetCount };

/** The dashboard path of a poller's own page. */
export const pollerPath = (name: string) => `/dashboard/pollers/${encodeURIComponent(name)}`;

/** The buttons for one poller: Run now, and Pause or Resume. */
export function pollerActions({ name, paused }: { name: string; paused: boolean }) {
  return html`<button type="button" data-action="run" data-poller="${name}">Run now</button>
    ${
      paused
        ? html`<button type="button" data-action="resume" data-poller="${name}">Resume</button>`
        : html`<button type="button" data-action="pause" data-poller="${name}">Pause</button>`
    }`;
}

/** Errors first (they stop the poller, or page someone), then warnings. */
function notes(status: PollerStatus) {
  const errors = [...new Set([...status.config_errors, ...status.alerts])];
  const warnings = status.warnings.filter((warning) => !errors.includes(warning));
  if (errors.length + warnings.length === 0) return '';
  return html`<tr class="notes">
    <td colspan="9">
      ${errors.map((text) => html`<div class="error">${text}</div>`)}
      ${warnings.map((text) => html`<div class="warn">${text}</div>`)}
    </td>
  </tr>`;
}

function lastRunCell(name: string, run: RunView | null, now: number) {
  if (run === null) return '—';
  return html`${run.outcome} · ${plural(run.records, 'record')} · ${relative(run.finished_at, now)}
    ${run.error ? html`<div class="error">${errorText(run.error, `last-run-${name}`)}</div>` : ''}`;
}

function wakeupCell(status: PollerStatus, facts: PollerFacts, now: number) {
  const next = nextWakeup(status, facts);
  return html`${next.at === null ? '' : html`${relative(next.at, now)}: `}<span class="muted">${next.why}</span>`;
}

/** A static poller's row, read live: lease, last run, next wake-up, and its notes below. */
function staticRow({ entry, status, runs, facts }: StaticRow, at: number) {
  return html`<tr data-poller="${status.name}">
    <td class="name"><a href="${pollerPath(status.name)}"><strong>${status.name}</strong></a> ${kindBadge('static')}
      ${labelList(entry.labels)}</td>
    <td class="current" data-label="State"><span class="state ${status.state}">${status.state}</span></td>
    <td class="nowrap mark" data-label="Checkpoint">${when(status.checkpoint)}</td>
    <td class="lag" data-label="Lag">${seconds(status.lag_seconds)}</td>
    <td data-label="Lease">${status.lease.held ? `run ${status.lease.epoch}, ${relative(status.lease.expires_at, at)}` : 'free'}</td>
    <td class="last-run" data-label="Last run">${lastRunCell(status.name, lastRealRun(runs), at)}</td>
    <td data-label="Next wake-up">${wakeupCell(status, facts, at)}</td>
    <td class="dead${status.dead_letters.count > 0 ? ' warn' : ''}" data-label="Dead letters">
      ${
        status.dead_letters.count > 0
          ? html`<a href="${pollerPath(status.name)}#dead-letters">${status.dead_letters.count}</a>`
          : '0'
      }
    </td>
    <td class="actions">${pollerActions(status)}</td>
  </tr>
  ${notes(status)}`;
}

function row(item: OverviewRow, at: number) {
  if (item.kind === 'static') return staticRow(item, at);
  const { entry } = item;
  const actions = pollerActions({ name: entry.name, paused: entry.state === 'paused' });
  return runtimeRow(entry, at, pollerPath(entry.name), actions);
}

/**
 * The overview: one page of pollers from the registry (its name links to its own page), a
 * chart for each static poller on it, and their audit log. The section carries where the
 * next page starts, for the page's script. The panel carries no "updated at": the script
 * shows when it last got one, and says so when it cannot.
 */
export function dashboardPanel(page: OverviewPage, now: Date) {
  const at = now.getTime();
  const statics = page.rows.filter((item): item is StaticRow => item.kind === 'static');
  const audit: AuditEntry[] = statics
    .flatMap(({ status }) => status.audit.map((entry) => ({ ...entry, poller: status.name })))
    .sort((a, b) => b.at.localeCompare(a.at))
    .slice(0, 30);
  return html`<section data-title="pollers" data-fleet-page data-count="${page.rows.length}"
    data-limit="${page.limit}" data-next-cursor="${page.nextCursor ?? ''}">
    ${page.errors.map((error) => html`<p class="error">${error}</p>`)}
    ${fleetSummary(page.counts)}
    <div class="scroll">
      <table class="pollers">
        <thead>
          <tr>
            <th>Poller</th><th>State</th><th>Checkpoint</th><th>Lag</th><th>Lease</th><th>Last run</th>
            <th>Next wake-up</th><th>Dead letters</th><th></th>
          </tr>
        </thead>
        <tbody>
          ${page.rows.map((item) => row(item, at))}
          ${page.rows.length === 0 ? html`<tr class="empty"><td colspan="9" class="muted">No poller matches.</td></tr>` : ''}
        </tbody>
      </table>
    </div>
    ${statics.map(
      ({ status, runs, facts }) => html`<figure>
        <figcaption><a href="${pollerPath(status.name)}">${status.name}</a>: lag and records per run</figcaption>
        ${runChart(runs, facts.alertAfterMs)}
      </figure>`,
    )}
    ${
      statics.length === 0
        ? ''
        : html`<h2>Audit log</h2>
          <p class="muted">Of the static pollers on this page; a runtime poller's is on its page.</p>
          ${auditList(audit)}`
    }
  </section>`;
}
