// A Jira-shaped world for the children tests: issues changed since a time, and their comments.
import { loadPoller } from '../../src/config/load.ts';
import { MemoryStore } from '../../src/engine/memory-store.ts';
import { PollerEngine } from '../../src/engine/poller.ts';
import type { DeliveryItem, RunContext } from '../../src/engine/ports.ts';
import { childrenSource } from '../../src/sources/derived-sources.ts';
import { HttpSource } from '../../src/sources/http-source.ts';

export const MINUTE = 60_000;
export const START = Date.parse('2026-09-01T00:00:00Z');

interface Comment {
  id: string;
  body: string;
  updated: string;
}

/**
 * A tracker with Jira's shapes: issues changed since `updated_from`, oldest first, and each
 * issue's comments by offset (`startAt`, `maxResults`), a 404 for an issue that is gone. A
 * comment added, edited or deleted bumps its issue's stamp, as Jira's does.
 */
export class Tracker {
  readonly issues = new Map<string, { key: string; updated: number; summary: string }>();
  readonly comments = new Map<string, Comment[]>();
  readonly requests: URL[] = [];
  pageSize = 2;
  /** Issues to a page of the search (by `startAt`); null: every issue in one answer. */
  searchPage: number | null = null;
  /** Stamps in whole seconds, as GitHub's are. */
  seconds = false;
  /** Answers comment requests of this issue with this status. */
  failComments: { key: string; status: number } | null = null;
  private next = 100;

  constructor(private readonly clock: { now: number }) {}

  /** The clock as the tracker stamps it. */
  private stamp(): number {
    return this.seconds ? Math.floor(this.clock.now / 1000) * 1000 : this.clock.now;
  }

  issue(key: string, summary = key): void {
    this.issues.set(key, { key, summary, updated: this.stamp() });
    if (!this.comments.has(key)) this.comments.set(key, []);
  }

  comment(key: string, body: string): string {
    this.next += 1;
    const id = String(this.next);
    this.comments.get(key)?.push({ id, body, updated: new Date(this.stamp()).toISOString() });
    this.touch(key);
    return id;
  }

  edit(key: string, id: string, body: string): void {
    const found = this.comments.get(key)?.find((comment) => comment.id === id);
    if (found === undefined) throw new Error(`no comment ${id}`);
    found.body = body;
    found.updated = new Date(this.stamp()).toISOString();
    this.touch(key);
  }

  remove(key: string, id: string): void {
    this.comments.set(
      key,
      (this.comments.get(key) ?? []).filter((comment) => comment.id !== id),
    );
    this.touch(key);
  }

  /** Comments left out of the next listing only (as a shifted offset skips one). */
  readonly skipOnce = new Set<string>();

  private touch(key: string): void {
    const issue = this.issues.get(key);
    if (issue) issue.updated = this.stamp();
  }

  readonly fetch = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    this.requests.push(url);
    if (url.pathname === '/search') {
      const from = Date.parse(url.searchParams.get('updated_from') ?? '');
      const issues = [...this.issues.values()]
        .filter((issue) => issue.updated >= from)
        .sort((a, b) => a.updated - b.updated)
        .map(({ key, summary, updated }) => ({
          key,
          fields: { summary, updated: new Date(updated).toISOString() },
        }));
      if (this.searchPage === null) return Response.json({ issues });
      const startAt = Number(url.searchParams.get('startAt') ?? '0');
      const page = issues.slice(startAt, startAt + this.searchPage);
      return Response.json({ startAt, total: issues.length, issues: page });
    }
    const match = /^\/issue\/([^/]+)\/comment$/.exec(url.pathname);
    if (match === null) return new Response('no route', { status: 400 });
    const key = decodeURIComponent(match[1] ?? '');
    if (this.failComments?.key === key) {
      return Response.json({ error: 'down' }, { status: this.failComments.status });
    }
    const comments = this.issues.has(key) ? this.comments.get(key) : undefined;
    if (comments === undefined) return Response.json({ errorMessages: ['gone'] }, { status: 404 });
    if (url.searchParams.get('maxResults') !== String(this.pageSize)) {
      return new Response('maxResults', { status: 400 });
    }
    const startAt = Number(url.searchParams.get('startAt') ?? '0');
    const shown = comments.filter((comment) => !this.skipOnce.has(comment.id));
    if (startAt + this.pageSize >= shown.length) this.skipOnce.clear();
    return Response.json({
      startAt,
      total: shown.length,
      comments: shown.slice(startAt, startAt + this.pageSize),
    });
  };

  /** Comment requests made so far, as `KEY@startAt`. */
  commentPages(): string[] {
    return this.requests
      .filter((url) => url.pathname.endsWith('/comment'))
      .map(
        (url) =>
          `${decodeURIComponent(url.pathname.split('/')[2] ?? '')}@${url.searchParams.get('startAt') ?? '0'}`,
      );
  }
}

export function world(
  options: {
    children?: Record<string, unknown>;
    maxSubrequests?: number;
    lag?: string;
    /** Top-level keys of the poller (max_attempts, overlap, deliver…). */
    poller?: Record<string, unknown>;
  } = {},
) {
  const clock = { now: START };
  const tracker = new Tracker(clock);
  const entry = loadPoller(
    'comments',
    {
      every: '1m',
      max_subrequests: options.maxSubrequests ?? 1000,
      lag_allowance: options.lag ?? '0s',
      start_from: new Date(START).toISOString(),
      source: {
        url: 'https://jira.test/search',
        from_param: 'updated_from',
        items: 'issues',
        id: 'key',
        updated_at: 'fields.updated',
        children: {
          url: 'https://jira.test/issue/{parent.key}/comment',
          items: 'comments',
          updated_at: 'updated',
          params: { maxResults: '2' },
          next: { type: 'offset', param: 'startAt' },
          ...options.children,
        },
      },
      deliver: { type: 'handler', name: 'comments' },
      ...options.poller,
    },
    {},
  );
  if (!entry.ok) throw new Error(entry.errors.join('; '));
  const config = entry.config;
  const got: DeliveryItem[] = [];
  const receiver = { failIds: new Set<string>() };
  const store = new MemoryStore();
  const children = childrenSource(config.source);
  const ctx: RunContext = {
    poller: 'comments',
    config,
    store,
    source: new HttpSource(config.source, tracker.fetch, [], () => clock.now),
    ...(children
      ? {
          children: {
            source: new HttpSource(children, tracker.fetch, [], () => clock.now, {
              missingIsEmpty: true,
            }),
          },
        }
      : {}),
    deliverer: {
      batch: 1,
      async deliver(items) {
        if (items.some((item) => receiver.failIds.has(item.update.id))) {
          return { kind: 'retry' as const, error: 'receiver down' };
        }
        got.push(...items);
        return { kind: 'delivered' as const };
      },
    },
    now: () => clock.now,
    random: () => 0.5,
  };
  const engine = new PollerEngine(ctx, { set: async () => {} });
  const run = async () => {
    clock.now += MINUTE;
    await engine.trigger('manual');
    return engine.onAlarm();
  };
  const shown = () =>
    got.map((item) => `${item.update.id}${item.update.parent ? ` <${item.update.parent}` : ''}`);
  return { tracker, store, run, got, shown, clock, receiver, engine, ctx };
}
