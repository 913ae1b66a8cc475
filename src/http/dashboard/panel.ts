import { html } from 'hono/html';
import type { PollerStatus, RunView } from '../../poller/status.ts';
import { runChart } from './chart.ts';

const when = (iso: string | null) =>
  iso === null ? '—' : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

function lag(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  return `${Math.round(seconds / 3600)}h`;
}

/** What a poller's row says below it: config errors, why it is at fault, then warnings. */
function notes(status: PollerStatus): string[] {
  return [...new Set([...status.config_errors, ...status.alerts, ...status.warnings])];
}

/** The server-rendered dashboard panel: one row per poller, its chart, and the audit log. */
export function dashboardPanel(pollers: { status: PollerStatus; runs: RunView[] }[], now: Date) {
  const audit = pollers
    .flatMap(({ status }) => status.audit.map((entry) => ({ ...entry, poller: status.name })))
    .sort((a, b) => b.at.localeCompare(a.at))
    .slice(0, 30);
  return html`<section>
    <p class="muted">Updated ${when(now.toISOString())}</p>
    <table>
      <thead>
        <tr>
          <th>Poller</th><th>State</th><th>Checkpoint</th><th>Lag</th><th>Lease</th><th>Last run</th>
          <th>Next alarm</th><th>Dead letters</th><th></th>
        </tr>
      </thead>
      <tbody>
        ${pollers.map(
          ({ status }) => html`<tr data-poller="${status.name}">
            <td><strong>${status.name}</strong></td>
            <td><span class="state ${status.state}">${status.state}</span></td>
            <td>${when(status.checkpoint)}</td>
            <td>${lag(status.lag_seconds)}</td>
            <td>${status.lease.held ? `held by run ${status.lease.epoch} until ${when(status.lease.expires_at)}` : 'free'}</td>
            <td class="last-run">
              ${
                status.last_run
                  ? html`${status.last_run.outcome} · ${status.last_run.records} records · ${when(status.last_run.finished_at)}
                      ${status.last_run.error ? html`<div class="error">${status.last_run.error}</div>` : ''}`
                  : '—'
              }
            </td>
            <td>${when(status.next_alarm_at)}</td>
            <td>${status.dead_letters.count}</td>
            <td class="actions">
              <button data-action="run" data-poller="${status.name}">Run now</button>
              ${
                status.paused
                  ? html`<button data-action="resume" data-poller="${status.name}">Resume</button>`
                  : html`<button data-action="pause" data-poller="${status.name}">Pause</button>`
              }
            </td>
          </tr>
          ${
            notes(status).length > 0
              ? html`<tr><td colspan="9" class="error">${notes(status).join(' · ')}</td></tr>`
              : ''
          }`,
        )}
      </tbody>
    </table>
    ${pollers.map(
      ({ status, runs }) => html`<figure>
        <figcaption>${status.name}: lag and records over the last runs</figcaption>
        ${runChart(runs)}
      </figure>`,
    )}
    <h2>Audit log</h2>
    ${
      audit.length === 0
        ? html`<p class="muted">No admin actions yet.</p>`
        : html`<ul class="audit">
            ${audit.map(
              (entry) =>
                html`<li>${when(entry.at)} · ${entry.poller} · ${entry.action} · <code>${JSON.stringify(entry.detail)}</code></li>`,
            )}
          </ul>`
    }
  </section>`;
}
