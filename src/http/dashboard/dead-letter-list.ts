import { html } from 'hono/html';
import type { DeadLetterView } from '../../poller/dead-letters.ts';
import type { PollerStatus } from '../../poller/status.ts';
import { plural, when } from './format.ts';

/** A record is previewed up to this many characters: a dead letter can hold megabytes. */
const PREVIEW_CHARS = 2000;

/** The page of dead letters an admin sees, or why a reader does not. */
export type DeadLetterPage = { items: DeadLetterView[]; next_cursor: string | null } | 'admin only';

function preview(letter: DeadLetterView): string {
  const text = letter.record_text ?? JSON.stringify(letter.record, null, 2) ?? '';
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}\n… (cut)` : text;
}

/**
 * Dead letters, oldest first, each with Replay and Discard (which asks for a reason), and
 * Replay all. The buttons call the admin API from the page's script; nothing here submits.
 */
export function deadLetterList(status: PollerStatus, page: DeadLetterPage) {
  const { count } = status.dead_letters;
  const name = status.name;
  if (page === 'admin only') {
    return html`<p class="muted">${plural(count, 'dead letter')} waiting. Dead letters hold whole
      records: listing, replaying and discarding them needs ADMIN_TOKEN.</p>`;
  }
  if (page.items.length === 0) {
    return html`<p class="muted">None. An update whose delivery fails max_attempts times lands here,
      kept for ${status.dead_letters.retention ?? 'its retention'}.</p>`;
  }
  return html`<p class="warn">${plural(count, 'dead letter')} waiting${
    status.dead_letters.oldest ? `, the oldest since ${when(status.dead_letters.oldest)}` : ''
  }; each is pruned ${status.dead_letters.retention ?? ''} after its first failure.
    <button type="button" data-action="replay-all" data-poller="${name}" data-count="${count}">Replay all (${count})</button></p>
    <div class="scroll">
      <table class="dead-letters">
        <thead>
          <tr>
            <th>Id</th><th>Version</th><th>Error</th><th>Attempts</th><th>First failure</th>
            <th>Last failure</th><th></th>
          </tr>
        </thead>
        <tbody>
          ${page.items.map(
            (letter) => html`<tr data-key="${letter.key}">
              <td class="id"><strong>${letter.id ?? '(unreadable)'}</strong>
                <details data-keep="record:${letter.key}"><summary>record</summary><pre>${preview(letter)}</pre></details></td>
              <td class="nowrap" data-label="Version">${letter.version ?? '—'}</td>
              <td class="error" data-label="Error">${letter.error}</td>
              <td class="num" data-label="Attempts">${letter.attempts}</td>
              <td class="nowrap" data-label="First failure">${when(letter.first_failure)}</td>
              <td class="nowrap" data-label="Last failure">${when(letter.last_failure)}</td>
              <td class="actions">
                <button type="button" data-action="replay" data-poller="${name}" data-key="${letter.key}"
                  data-label="${letter.id ?? letter.key}">Replay</button>
                <button type="button" data-action="discard" data-poller="${name}" data-key="${letter.key}"
                  data-label="${letter.id ?? letter.key}">Discard…</button>
              </td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${
      page.next_cursor === null
        ? ''
        : html`<p class="muted">Showing the oldest ${page.items.length} of ${count}; Replay all goes through every one.</p>`
    }`;
}
