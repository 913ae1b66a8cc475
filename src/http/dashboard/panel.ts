import { html } from 'hono/html';
import type { PollerStatus, RunView } from '../../poller/status.ts';
import { type AuditEntry, auditList } from './audit.ts';
import { runChart } from './chart.ts';
import { lastRealRun, nextWakeup, type PollerFacts } from './explain.ts';
import { plural, relative, seconds, when } from './format.ts';

/** One poller as the overview shows it. */
export interface OverviewPoller {
  status: PollerStatus;
  runs: RunView[];
  facts: PollerFacts;
}

/** The dashboard path of a poller's own page. */
export const pollerPath = (name: string) => `/dashboard/pollers/${encodeURIComponent(name)}`;

/** The overview's buttons for one poller: Run now, and Pause or Resume. */
export function pollerActions(status: PollerStatus) {
  return html`<button type="button" data-action="run" data-poller="${status.name}">Run now</button>
    ${
      status.paused
        ? html`<button type="button" data-action="resume" data-poller="${status.name}">Resume</button>`
        : html`<button type="button" data-action="pause" data-poller="${status.name}">Pause</button>`
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

function lastRunCell(run: RunView | null, now: number) {
  if (run === null) return '—';
  return html`${run.outcome} · ${plural(run.records, 'record')} · ${relative(run.finished_at, now)}
    ${run.error ? html`<div class="error">${run.error}</div>` : ''}`;
}

function wakeupCell(status: PollerStatus, facts: PollerFacts, now: number) {
  const next = nextWakeup(status, facts);
  return html`${next.at === null ? '' : html`${relative(next.at, now)}: `}<span class="muted">${next.why}</span>`;
}

/**
 * The overview: one row per poller (its name links to its own page), a chart each, and the
 * audit log of them all. The panel carries no "updated at": the page's script shows when it
 * last got one, and says so when it cannot.
 */
export function dashboardPanel(pollers: OverviewPoller[], errors: string[], now: Date) {
  const at = now.getTime();
  const audit: AuditEntry[] = pollers
    .flatMap(({ status }) => status.audit.map((entry) => ({ ...entry, poller: status.name })))
    .sort((a, b) => b.at.localeCompare(a.at))
    .slice(0, 30);
  return html`<section data-title="pollers">
    ${errors.map((error) => html`<p class="error">${error}</p>`)}
    <div class="scroll">
      <table class="pollers">
        <thead>
          <tr>
            <th>Poller</th><th>State</th><th>Checkpoint</th><th>Lag</th><th>Lease</th><th>Last run</th>
            <th>Next wake-up</th><th>Dead letters</th><th></th>
          </tr>
        </thead>
        <tbody>
          ${pollers.map(
            ({ status, runs, facts }) => html`<tr data-poller="${status.name}">
              <td><a href="${pollerPath(status.name)}"><strong>${status.name}</strong></a></td>
              <td><span class="state ${status.state}">${status.state}</span></td>
              <td class="nowrap">${when(status.checkpoint)}</td>
              <td>${seconds(status.lag_seconds)}</td>
              <td>${status.lease.held ? `run ${status.lease.epoch}, ${relative(status.lease.expires_at, at)}` : 'free'}</td>
              <td class="last-run">${lastRunCell(lastRealRun(runs), at)}</td>
              <td>${wakeupCell(status, facts, at)}</td>
              <td class="${status.dead_letters.count > 0 ? 'warn' : ''}">
                ${
                  status.dead_letters.count > 0
                    ? html`<a href="${pollerPath(status.name)}#dead-letters">${status.dead_letters.count}</a>`
                    : '0'
                }
              </td>
              <td class="actions">${pollerActions(status)}</td>
            </tr>
            ${notes(status)}`,
          )}
        </tbody>
      </table>
    </div>
    ${pollers.map(
      ({ status, runs, facts }) => html`<figure>
        <figcaption><a href="${pollerPath(status.name)}">${status.name}</a>: lag and records per run</figcaption>
        ${runChart(runs, facts.alertAfterMs)}
      </figure>`,
    )}
    <h2>Audit log</h2>
    ${auditList(audit)}
  </section>`;
}
