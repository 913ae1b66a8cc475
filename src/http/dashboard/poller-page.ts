import { html } from 'hono/html';
import { formatDuration } from '../../config/duration.ts';
import type { PollerStatus, RunView } from '../../poller/status.ts';
import { auditList } from './audit.ts';
import { authSection, authWhyLine, authWhyLines, type RefreshSecret } from './auth.ts';
import { runChart } from './chart.ts';
import { type ConfigAsWritten, configView } from './config-view.ts';
import { type DeadLetterPage, deadLetterList } from './dead-letter-list.ts';
import {
  leaseText,
  nextWakeup,
  type PollerFacts,
  scheduleText,
  skewText,
  whyLines,
} from './explain.ts';
import { labelList } from './fleet-rows.ts';
import { plural, relative, seconds, when } from './format.ts';
import { freshnessRows } from './freshness.ts';
import { pollerActions } from './panel.ts';
import { previewButton } from './preview-button.ts';
import { reconcileSection, reconcileWhyLine } from './reconcile.ts';
import { resumeSection } from './resume.ts';
import { runTable } from './run-table.ts';

/** Everything the page of one poller shows. */
export interface PollerPage {
  status: PollerStatus;
  runs: RunView[];
  facts: PollerFacts;
  deadLetters: DeadLetterPage;
  /** The config as written (in POLLERS, or with PUT /pollers/:name). */
  config: ConfigAsWritten;
  labels: Record<string, string>;
  /** The `${NAME}` source.auth.refresh_token comes from, for "reconnect needed" (never a value). */
  refreshSecret: RefreshSecret | null;
}

function kindText({ facts, config }: PollerPage): string {
  return facts.kind === 'static'
    ? 'static: declared in POLLERS (wrangler.toml)'
    : `runtime: created with PUT /pollers/:name (config version ${config.version})`;
}

function facts(page: PollerPage, now: number) {
  const { status, facts } = page;
  const next = nextWakeup(status, facts);
  const { counters } = status;
  const rows: [string, unknown][] = [
    ['Kind', kindText(page)],
    ['Labels', Object.keys(page.labels).length === 0 ? 'none' : labelList(page.labels)],
    [
      'Checkpoint',
      status.checkpoint === null
        ? 'none yet: the first run stores one'
        : `${when(status.checkpoint)}: lag ${seconds(status.lag_seconds)}${facts.alertAfterMs === null ? '' : ` (alert_after ${formatDuration(facts.alertAfterMs)})`}`,
    ],
    ['Lease', leaseText(status, now)],
    [
      'Next wake-up',
      html`${next.at === null ? '' : `${when(next.at)} (${relative(next.at, now)}): `}${next.why}`,
    ],
    [
      'Rate limit',
      status.rate_limited_until === null
        ? 'none: the upstream asked for no pause'
        : `held off until ${when(status.rate_limited_until)} (${relative(status.rate_limited_until, now)}), as the upstream asked`,
    ],
    ['Upstream clock', skewText(status.upstream_skew_seconds)],
    ...freshnessRows(status),
    ['Failed runs in a row', String(status.consecutive_failures)],
    [
      'Runs',
      `${counters.runs} (${counters.successes} caught up, ${counters.continued} continued, ${counters.failures} failed, ${counters.skipped} skipped, ${counters.recoveries} recovered); ${plural(counters.records_delivered, 'record')} delivered`,
    ],
    ['Schedule', `${scheduleText(facts)}${facts.enabled ? '' : ' (disabled)'}`],
  ];
  return html`<dl class="facts">
    ${rows.map(([term, value]) => html`<dt>${term}</dt><dd>${value}</dd>`)}
  </dl>`;
}

/**
 * The page of one poller: its state and why, checkpoint, lease, next wake-up, rate limit and
 * skew, its source's authentication (with source.auth), its resume token (with
 * source.resume), its reconciliation (with reconcile), a chart and the run history, its dead letters
 * (for an admin), its config as written and its audit log.
 */
export function pollerPanel(page: PollerPage, now: Date) {
  const { status, runs } = page;
  const at = now.getTime();
  const why = authWhyLines(status, whyLines(status, page.facts, runs, at));
  return html`<section class="poller" data-title="${status.name}" data-poller-page="${status.name}">
    <h2>${status.name} <span class="state ${status.state}">${status.state}</span></h2>
    <ul class="why">
      ${why.map(
        (line, index) =>
          html`<li class="${index === 0 ? '' : status.alerts.includes(line) || status.config_errors.includes(line) ? 'error' : 'warn'}">${authWhyLine(status, line) ?? reconcileWhyLine(status, line) ?? line}</li>`,
      )}
    </ul>
    <p class="actions">${pollerActions(status)} ${previewButton(status.name)}</p>
    ${facts(page, at)}
    ${authSection(status, page.refreshSecret, at)}
    ${resumeSection(status)}
    ${reconcileSection(status, at)}
    <h3>Lag and records per run</h3>
    <figure>${runChart(runs, page.facts.alertAfterMs)}</figure>
    <h3>Run history</h3>
    ${runTable(runs)}
    <h3 id="dead-letters">Dead letters</h3>
    ${deadLetterList(status, page.deadLetters)}
    <h3>Config</h3>
    ${configView(page.config)}
    <h3>Audit log</h3>
    ${auditList(status.audit)}
  </section>`;
}
