import { html } from 'hono/html';
import type { PollerStatus } from '../../poller/status.ts';
import { plural, seconds, when } from './format.ts';

type ResumeView = NonNullable<PollerStatus['resume']>;

function tokenText(view: ResumeView): string {
  if (!view.token_stored) {
    return 'none: the next round starts from source.url (the first round, or a resync)';
  }
  return `stored ${when(view.token_stored_at)}, ${seconds(view.token_age_seconds)} old: the next round starts from it`;
}

function roundText(view: ResumeView): string {
  if (view.round_pages === 0) return 'none in progress: the next round starts at its first page';
  return `${plural(view.round_pages, 'page')} handled; the next run continues after ${view.round_pages === 1 ? 'it' : 'them'}, and the token is stored when the round ends`;
}

function resyncText(view: ResumeView): string {
  const last = view.last_resync;
  return last === null ? 'none' : `${when(last.at)}: ${last.reason}`;
}

/**
 * The poller page's Resume token section (source.resume): the token's age and the round in
 * progress, and the last resync; never the token (status has none of it). Nothing for a
 * poller without source.resume.
 */
export function resumeSection(status: PollerStatus) {
  const view = status.resume;
  if (view === null) return '';
  const rows: [string, string][] = [
    ['Token', tokenText(view)],
    ['Round', roundText(view)],
    ['Last resync', resyncText(view)],
  ];
  return html`<h3 id="resume">Resume token</h3>
    <dl class="facts" data-resume="${status.name}">
      ${rows.map(([term, value]) => html`<dt>${term}</dt><dd>${value}</dd>`)}
    </dl>
    <p class="muted">A resync by hand: <code>PUT /pollers/${status.name}/checkpoint</code> with
      <code>{"resync": true, "reason": "…"}</code> (admin token).</p>`;
}
