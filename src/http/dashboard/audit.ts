import { html } from 'hono/html';
import type { Json } from '../../engine/ports.ts';
import { plural, when } from './format.ts';

export interface AuditEntry {
  at: string;
  action: string;
  detail: Json;
  /** Set on the overview, which mixes the pollers' logs. */
  poller?: string;
}

/** A field of an entry's detail as text, or '' when it is absent. */
function field(detail: Json, key: string): string {
  if (detail === null || typeof detail !== 'object' || Array.isArray(detail)) return '';
  const value = (detail as Record<string, unknown>)[key];
  return value === null || value === undefined ? '' : String(value);
}

const because = (reason: string) => (reason ? `: “${reason}”` : '');

/** What an admin action did, in words ("paused: “upstream maintenance”"). */
export function auditSentence({ action, detail }: AuditEntry): string {
  const key = field(detail, 'key');
  switch (action) {
    case 'run.manual':
      return `run by hand: ${field(detail, 'outcome') || 'started'}`;
    case 'poller.paused':
      return `paused${because(field(detail, 'reason'))}`;
    case 'poller.resumed':
      return 'resumed';
    case 'checkpoint.moved': {
      const [from, to] = [field(detail, 'from'), field(detail, 'to')];
      const kind = Date.parse(to) > Date.parse(from) ? 'forward' : 'back: a backfill';
      return `checkpoint moved ${kind}, from ${when(from || null)} to ${when(to || null)}${because(field(detail, 'reason'))}`;
    }
    case 'dead_letter.replayed':
      return `dead letter ${key} replayed and delivered`;
    case 'dead_letter.replay_failed':
      return `replay of dead letter ${key} failed: ${field(detail, 'error')}`;
    case 'dead_letter.discarded':
      return `dead letter ${key} discarded${because(field(detail, 'reason'))}`;
    case 'dead_letter.pruned': {
      const count = Number(field(detail, 'count')) || 0;
      return `${plural(count, 'dead letter')} pruned (${field(detail, 'past_retention') || 0} older than ${field(detail, 'retention') || 'the retention'}, ${field(detail, 'beyond_cap') || 0} beyond the cap)`;
    }
    case 'preview': {
      const warned = field(detail, 'warnings').split(',').filter(Boolean).join(', ');
      return `previewed from ${when(field(detail, 'from') || null)}: ${plural(Number(field(detail, 'records')) || 0, 'record')} in ${plural(Number(field(detail, 'pages')) || 0, 'page')}, ${warned ? `warnings: ${warned}` : 'no warnings'}; nothing delivered`;
    }
    default:
      return `${action} ${JSON.stringify(detail)}`;
  }
}

/** The audit log, newest first, each action in words (its code kept in `data-audit`). */
export function auditList(entries: AuditEntry[]) {
  if (entries.length === 0) return html`<p class="muted">No admin actions yet.</p>`;
  return html`<ul class="audit">
    ${entries.map(
      (entry) =>
        html`<li data-audit="${entry.action}"><span class="muted">${when(entry.at)}</span>
          ${entry.poller === undefined ? '' : html`· <strong>${entry.poller}</strong>`} · ${auditSentence(entry)}</li>`,
    )}
  </ul>`;
}
