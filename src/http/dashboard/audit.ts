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
    case 'checkpoint.resync':
      return `resync asked for: the resume token cleared, the next round from source.url${because(field(detail, 'reason'))}`;
    case 'resume_resync':
      return `resync: ${field(detail, 'reason')}`;
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
    case 'secret.set': {
      const origins = field(detail, 'origins');
      const bound = origins ? `, sent only to ${origins.split(',').join(', ')}` : '';
      return `secret ${field(detail, 'name')} ${field(detail, 'replaced') === 'true' ? 'replaced' : 'set'}${bound}`;
    }
    case 'secret.deleted':
      return `secret ${field(detail, 'name')} deleted`;
    case 'reconcile.requested':
      return 'listing requested (Reconcile now)';
    case 'reconcile.confirmed':
      return `${plural(Number(field(detail, 'deletes')) || 0, 'held delete')} confirmed and delivered`;
    case 'preview': {
      const warned = field(detail, 'warnings').split(',').filter(Boolean).join(', ');
      return `previewed from ${when(field(detail, 'from') || null)}: ${plural(Number(field(detail, 'records')) || 0, 'record')} in ${plural(Number(field(detail, 'pages')) || 0, 'page')}, ${warned ? `warnings: ${warned}` : 'no warnings'}; nothing delivered`;
    }
    default:
      return `${action.replace(/[._]/g, ' ')}${detailText(detail)}`;
  }
}

/**
 * An action this page has no sentence for, still in words: its detail as "key value" pairs
 * ("preview: pages 3, records 20"), nested values flattened, never raw JSON.
 */
function detailText(detail: Json): string {
  if (detail === null || typeof detail !== 'object' || Array.isArray(detail)) {
    return detail === null || detail === undefined ? '' : `: ${valueText(detail)}`;
  }
  const pairs = Object.entries(detail)
    .filter(([, value]) => value !== null && value !== undefined && value !== '')
    .map(([key, value]) => `${key.replace(/_/g, ' ')} ${valueText(value)}`);
  return pairs.length === 0 ? '' : `: ${pairs.join(', ')}`;
}

function valueText(value: unknown): string {
  if (Array.isArray(value)) return value.map(valueText).join(', ');
  if (value !== null && typeof value === 'object') {
    return `(${Object.entries(value)
      .map(([key, inner]) => `${key.replace(/_/g, ' ')} ${valueText(inner)}`)
      .join(', ')})`;
  }
  return String(value);
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
