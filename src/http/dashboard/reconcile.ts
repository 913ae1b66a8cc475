import { html } from 'hono/html';
import type { ReconcileView } from '../../poller/reconcile-view.ts';
import type { PollerStatus } from '../../poller/status.ts';
import { elapsed, plural, relative, when } from './format.ts';

type LastListing = NonNullable<ReconcileView['last_listing']>;

/** What became of a completed listing's findings, in words. */
const OUTCOMES: Record<LastListing['outcome'], string> = {
  delivered: 'its changes delivered (or on their way)',
  held: 'its deletes held (above)',
  agreed: 'it found deletes an earlier listing found again: those delivered',
  unconfirmed: 'its deletes wait for the next listing to confirm them',
};

function lastListingText(last: LastListing | null, now: number): string {
  if (last === null) return 'none completed yet';
  return `finished ${when(last.finished_at)} (${relative(last.finished_at, now)}, took ${elapsed(last.started_at, last.finished_at)}): ${plural(last.ids, 'id')} listed, ${plural(last.deletes, 'delete')}, ${plural(last.upserts, 'upsert')}; ${OUTCOMES[last.outcome]}`;
}

function inProgressText(listing: ReconcileView['listing'], now: number): string {
  if (listing === null) return 'none';
  const unreadable = listing.unreadable > 0 ? `, ${listing.unreadable} without a readable id` : '';
  return `since ${when(listing.started_at)} (${relative(listing.started_at, now)}): ${plural(listing.pages, 'page')}, ${plural(listing.ids, 'id')} so far${unreadable}`;
}

function nextListingText(view: ReconcileView, now: number): string {
  // source.resume.resync_deletes: a full round is the listing (a resync, or a manual one).
  if (view.every === null) {
    return view.listing !== null
      ? 'when the full round in progress completes'
      : view.next_listing_at === null
        ? 'the next full round of source.resume (a resync)'
        : 'the next round: it lists in full to confirm deletes';
  }
  if (view.listing !== null) return `when the one in progress completes, every ${view.every}`;
  if (view.requested) return 'requested by an admin: the next run starts it';
  const at = view.next_listing_at;
  if (at === null) return `booked by the next run, then every ${view.every}`;
  const check = view.held === null ? '' : ', to check the held deletes';
  if (Date.parse(at) <= now) return `due since ${when(at)}: the next run starts it${check}`;
  return `${when(at)} (${relative(at, now)}), every ${view.every}${check}`;
}

function pendingText(view: ReconcileView): string {
  const found =
    view.pending === 0 ? 'nothing' : `${plural(view.pending, 'change')} found, not delivered yet`;
  if (view.unconfirmed === 0) return found;
  return `${found}; ${plural(view.unconfirmed, 'delete')} waiting for the next listing to confirm ${view.unconfirmed === 1 ? 'it' : 'them'}`;
}

function errorText(error: ReconcileView['error'], now: number) {
  if (error === null) return 'none';
  const retry =
    error.retry_at === null
      ? 'tried again by the next run'
      : `tried again ${relative(error.retry_at, now)} (${when(error.retry_at)})`;
  return html`<span class="error">${error.message}</span> at ${when(error.at)}; ${retry}`;
}

/**
 * The held deletes, where they cannot be missed, with the button that releases them: the
 * one thing on this page that waits for a person.
 */
function heldBox(name: string, held: NonNullable<ReconcileView['held']>) {
  return html`<div class="held" data-held="${held.deletes}">
    <p><strong>${plural(held.deletes, 'delete')} held</strong> of ${plural(held.known_ids, 'known id')},
      since ${when(held.since)}: ${held.reason}. ${
        held.confirm_only
          ? 'None is delivered until an admin confirms them: no listing agrees with an empty one.'
          : 'None is delivered until an admin confirms them, or a later listing finds them again.'
      }</p>
    <button type="button" data-action="reconcile-confirm" data-poller="${name}"
      data-count="${held.deletes}">Confirm deletes (${held.deletes})</button>
  </div>`;
}

/**
 * The poller page's Reconciliation section (reconcile): held deletes first, with Confirm
 * deletes, then the last listing, the one going on, what waits, the error and the next
 * listing, and Reconcile now. Nothing for a poller without reconcile.
 */
export function reconcileSection(status: PollerStatus, now: number) {
  const view = status.reconcile;
  if (view === null) return '';
  const rows: [string, unknown][] = [
    ['Last listing', lastListingText(view.last_listing, now)],
    ['In progress', inProgressText(view.listing, now)],
    ['Pending', pendingText(view)],
    ['Error', errorText(view.error, now)],
    ['Next listing', nextListingText(view, now)],
  ];
  return html`<h3 id="reconcile">Reconciliation</h3>
    <div class="reconcile">
      ${view.held === null ? '' : heldBox(status.name, view.held)}
      <dl class="facts">
        ${rows.map(([term, value]) => html`<dt>${term}</dt><dd>${value}</dd>`)}
      </dl>
      ${view.every === null ? '' : html`<p class="actions"><button type="button" data-action="reconcile" data-poller="${status.name}">Reconcile now</button></p>`}
    </div>`;
}

/**
 * A line of the page's "why" list about the reconciliation, said here as a pointer to its
 * section: held deletes (an alert and a warning, with the API call to confirm them) are told
 * once, in the section, with the button; a reconcile error keeps its text and gets the link.
 * Null for any other line.
 */
export function reconcileWhyLine(status: PollerStatus, line: string) {
  const view = status.reconcile;
  if (view === null) return null;
  const link = html`<a href="#reconcile">Reconciliation</a>`;
  if (view.held !== null && line.startsWith(`reconcile held ${view.held.deletes} deletes (`)) {
    return html`Reconciliation holds ${plural(view.held.deletes, 'delete')}: see ${link} to confirm them.`;
  }
  if (view.error !== null && line.startsWith(`reconcile: ${view.error.message} (`)) {
    return html`${line}: see ${link}.`;
  }
  return null;
}
