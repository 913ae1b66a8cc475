/**
 * The worlds of the crash sweeps (test/support/crash-sweep.ts): a resume poller against the Google
 * Calendar sync fake of the examples (test/workers/vendors/google-calendar-sync.ts), with the
 * example's request shape, and a poller with children against the Jira-like tracker of the
 * children tests (test/support/children-world.ts). Each changes its upstream before the run
 * that dies and while it is dead.
 */

import { loadPoller } from '../../src/config/load.ts';
import type { PollerConfig } from '../../src/config/schema.ts';
import { ListingReconciler } from '../../src/engine/reconcile.ts';
import { childrenSource } from '../../src/sources/derived-sources.ts';
import { HttpSource } from '../../src/sources/http-source.ts';
import { tombstoneRule } from '../../src/sources/tombstone.ts';
import { FakeGoogleCalendarSync } from '../workers/vendors/google-calendar-sync.ts';
import { Tracker } from './children-world.ts';
import type { Fetch, SweepWorld } from './crash-sweep.ts';

const START = Date.parse('2026-09-01T00:00:00Z');
const SECOND = 1_000;

/** How records go out: deliver.batch and deliver.concurrency. */
export interface Delivery {
  batch: number;
  concurrency: number;
}

function load(raw: Record<string, unknown>): PollerConfig {
  const entry = loadPoller('sweep', { every: '5m', lease_ttl: '15m', max_run: '10m', ...raw }, {});
  if (!entry.ok) throw new Error(entry.errors.join('\n'));
  return entry.config;
}

/**
 * Where the round that dies starts: the first round (from source.url), a round from a token
 * with many changes since, or a resync (the token expired: a round from source.url that
 * lists every event again, most of them unchanged).
 */
export type RoundStart = 'first' | 'token' | 'resync';

/** Options of the round world. */
export interface RoundShape {
  start: RoundStart;
  events: number;
  /** Events to a page of a round. */
  page: number;
  /** The event cancelled while the run is dead (not with a resync: a full round shows none). */
  cancelledWhileDead?: number;
  /** source.resume.resync_deletes: a full round's listing is compared with the ids known. */
  resyncDeletes?: boolean;
}

/** A resume poller over `events` calendar events, `page` to a page of its rounds. */
export function roundWorld(shape: RoundShape, delivery: Delivery): SweepWorld {
  const { start, events, page } = shape;
  const clock = { now: START };
  const fake = new FakeGoogleCalendarSync();
  fake.pageCap = page;
  const config = load({
    max_subrequests: 100_000,
    source: {
      url: 'https://www.googleapis.com/calendar/v3/calendars/primary/events',
      items: 'items',
      params: { maxResults: String(page) },
      headers: { Authorization: 'Bearer sweep' },
      deleted: { path: 'status', equals: 'cancelled' },
      next: { type: 'cursor', param: 'pageToken', path: 'nextPageToken' },
      resume: {
        path: 'nextSyncToken',
        param: 'syncToken',
        params: { showDeleted: 'true' },
        resync_deletes: shape.resyncDeletes ?? false,
      },
    },
    deliver: { type: 'handler', name: 'sweep', concurrency: delivery.concurrency },
  });
  const id = (i: number) => `ev${String(i).padStart(5, '0')}`;
  let added = 0;
  const put = (i: number, deleted = false) => {
    clock.now += SECOND;
    fake.put(id(i), clock.now, { deleted });
  };
  const add = () => put(added++);
  for (let i = 0; i < events; i += 1) add();
  return {
    config,
    // The first round is the run that dies: no run before it.
    ...(start === 'first' ? { diesFirst: true } : {}),
    batch: delivery.batch,
    clock,
    fetch: (request) => fake.handle(request),
    ports: (fetch: Fetch) => ({
      source: new HttpSource(config.source, fetch, [], () => clock.now),
      isDeleted: tombstoneRule(config.source),
      // As the Worker wires it (poller/wiring.ts): the reconciliation's turn delivers them.
      ...(shape.resyncDeletes ? { reconcile: new ListingReconciler(null, null) } : {}),
    }),
    change(stage) {
      if (stage === 'before') {
        if (start === 'first') return;
        // Most events change; a round from a token lists them, a resync lists every event.
        for (let i = 0; i < events; i += 2) put(i);
        for (let i = 0; i < events / 4; i += 1) add();
        // A resync does not see what was cancelled (source.resume.resync_deletes would).
        if (start === 'token') for (let i = 1; i < events; i += 7) put(i, true);
        if (start === 'resync') fake.expireTokens();
        return;
      }
      put(3);
      add();
      if (start !== 'resync') put(shape.cancelledWhileDead ?? 5, true);
    },
    upstream() {
      const latest = new Map<string, { at: number; deleted: boolean }>();
      for (const version of fake.versions) latest.set(version.id, version);
      const shown = new Map<string, string>();
      for (const [key, version] of latest) {
        if (!version.deleted) shown.set(key, new Date(version.at).toISOString());
      }
      return shown;
    },
    content: (item) => String(Reflect.get(Object(item.update.record), 'updated')),
  };
}

/** Options of the children world. */
export interface ChildrenShape {
  issues: number;
  /** Comments of each issue at first (each issue's listing pages `page` at a time). */
  comments: number;
  page: number;
  /** Issues to a page of the search: a window's parents come in pages too. */
  searchPage: number;
  /** children.deletes: a comment deleted upstream is deleted at the receiver. */
  deletes: boolean;
  deliverParents: boolean;
}

/**
 * A poller with children over `issues` issues of `comments` comments each, listed `page` to
 * a page, the issues `searchPage` to a page. Before the run that dies, every issue changes
 * and a new issue comes with its comments; while it is dead, the second issue changes.
 */
export function childrenWorld(shape: ChildrenShape, delivery: Delivery): SweepWorld {
  const clock = { now: START };
  const tracker = new Tracker(clock);
  tracker.pageSize = shape.page;
  tracker.searchPage = shape.searchPage;
  const config = load({
    max_subrequests: 100_000,
    start_from: new Date(START).toISOString(),
    source: {
      url: 'https://jira.test/search',
      from_param: 'updated_from',
      items: 'issues',
      id: 'key',
      updated_at: 'fields.updated',
      next: { type: 'offset', param: 'startAt' },
      children: {
        url: 'https://jira.test/issue/{parent.key}/comment',
        items: 'comments',
        updated_at: 'updated',
        params: { maxResults: String(shape.page) },
        next: { type: 'offset', param: 'startAt' },
        deletes: shape.deletes,
        deliver_parents: shape.deliverParents,
      },
    },
    deliver: { type: 'handler', name: 'sweep', concurrency: delivery.concurrency },
  });
  const key = (i: number) => `ACME-${i + 1}`;
  const later = () => {
    clock.now += SECOND;
  };
  const open = (i: number) => {
    later();
    tracker.issue(key(i));
    for (let c = 0; c < shape.comments; c += 1) tracker.comment(key(i), `c${c}`);
  };
  const listed = (i: number) => tracker.comments.get(key(i)) ?? [];
  for (let i = 0; i < shape.issues; i += 1) open(i);
  const children = childrenSource(config.source);
  return {
    config,
    batch: delivery.batch,
    clock,
    fetch: tracker.fetch,
    ports: (fetch: Fetch) => ({
      source: new HttpSource(config.source, fetch, [], () => clock.now),
      ...(children
        ? {
            children: {
              source: new HttpSource(children, fetch, [], () => clock.now, {
                missingIsEmpty: true,
              }),
            },
          }
        : {}),
    }),
    change(stage) {
      if (stage === 'before') {
        // Every issue changes, a second apart (the window lists them in this order): its
        // first comment deleted and its last edited, its first edited, or one added.
        for (let i = 0; i < shape.issues; i += 1) {
          later();
          const first = listed(i)[0];
          const last = listed(i).at(-1);
          if (i % 3 === 0 && first && last) {
            // Without children.deletes, a comment deleted upstream stays at the receiver.
            if (shape.deletes) tracker.remove(key(i), first.id);
            tracker.edit(key(i), last.id, `${last.body}, edited`);
          } else if (i % 3 === 1 && first) tracker.edit(key(i), first.id, `${first.body}, edited`);
          else tracker.comment(key(i), 'added');
        }
        open(shape.issues);
        return;
      }
      // One issue only: a crash in another one's children continues at its kept page.
      later();
      const edited = listed(1).at(-1);
      if (edited) tracker.edit(key(1), edited.id, `${edited.body}, edited while dead`);
      tracker.comment(key(1), 'added while dead');
    },
    upstream() {
      const shown = new Map<string, string>();
      for (const [parent, issue] of tracker.issues) {
        for (const comment of tracker.comments.get(parent) ?? []) {
          shown.set(`${parent}/${comment.id}`, `${comment.body} @${comment.updated}`);
        }
        if (shape.deliverParents) shown.set(parent, new Date(issue.updated).toISOString());
      }
      return shown;
    },
    content(item) {
      const record = Object(item.update.record);
      if (item.update.parent === undefined) {
        return String(Reflect.get(Object(Reflect.get(record, 'fields')), 'updated'));
      }
      return `${String(Reflect.get(record, 'body'))} @${String(Reflect.get(record, 'updated'))}`;
    },
  };
}
