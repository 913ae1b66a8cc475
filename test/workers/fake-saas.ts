import { vi } from 'vitest';
import type { FakeHost } from './fakes.ts';

/** One record of the fake SaaS as it stands now. */
interface SaasRecord {
  id: string;
  updatedAtMs: number;
  fields: Record<string, unknown>;
}

/**
 * A SaaS API that deletes, on `upstream.test` (installFakes' hosts): the changed-since
 * stream (`/v1/sessions`, live records only, like most), a deletions stream (`/v1/deleted`,
 * `deleted_at` since `date_from`), a full listing (`/v1/all`) and a record by id
 * (`/v1/sessions/:id`). Every list answers `per_page` (default 100) at a time with a `cursor`.
 */
export class FakeSaas implements FakeHost {
  readonly records = new Map<string, SaasRecord>();
  /** The deletions stream's entries: what `/v1/deleted` shows. */
  readonly deleted: { id: string; deletedAtMs: number }[] = [];
  readonly requests: URL[] = [];
  private readonly scripted = new Map<string, ((url: URL) => Response)[]>();
  private holds: { path: string; at: number; arrived: boolean; released: boolean }[] = [];
  perPage = 100;

  /** Creates or updates a record (its updated_at `at`). */
  put(id: string, at: number, fields: Record<string, unknown> = {}): void {
    this.records.set(id, { id, updatedAtMs: at, fields });
  }

  /** Changes a record's content without a new updated_at (a bulk import, a restore). */
  silentlyChange(id: string, fields: Record<string, unknown>): void {
    const record = this.records.get(id);
    if (!record) throw new Error(`no record ${id}`);
    record.fields = { ...record.fields, ...fields };
  }

  /** Deletes a record; with `logged`, the deletions stream shows it (deleted at `at`). */
  remove(id: string, options: { at?: number; logged?: boolean } = {}): void {
    this.records.delete(id);
    if (options.logged) this.deleted.push({ id, deletedAtMs: options.at ?? Date.now() });
  }

  /** The next request to `path` gets this answer instead of data. */
  respondOnce(path: string, answer: (url: URL) => Response): void {
    const queue = this.scripted.get(path) ?? [];
    queue.push(answer);
    this.scripted.set(path, queue);
  }

  /**
   * Holds a request to `path` open until released (flags only: see FakeUpstream): the next
   * one, or the one after `skip` others.
   */
  holdNext(path: string, skip = 0) {
    const hold = { path, at: this.asked(path).length + skip, arrived: false, released: false };
    this.holds.push(hold);
    return {
      arrived: () => vi.waitUntil(() => hold.arrived, { timeout: 2_000, interval: 1 }),
      release: () => {
        hold.released = true;
      },
    };
  }

  /** Requests to `path`, in order. */
  asked(path: string): URL[] {
    return this.requests.filter((url) => url.pathname === path);
  }

  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const index = this.asked(url.pathname).length;
    this.requests.push(url);
    const hold = this.holds.find((entry) => entry.path === url.pathname && entry.at === index);
    if (hold) {
      hold.arrived = true;
      while (!hold.released) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const scripted = this.scripted.get(url.pathname)?.shift();
    if (scripted) return scripted(url);
    return this.answer(url);
  }

  /** What the API answers `url` with, unscripted. */
  answer(url: URL): Response {
    const from = Date.parse(url.searchParams.get('date_from') ?? '1970-01-01T00:00:00Z');
    if (url.pathname === '/v1/sessions') {
      const changed = [...this.records.values()].filter((r) => r.updatedAtMs >= from);
      return this.page(url, changed.sort(byTime).map(shown));
    }
    if (url.pathname === '/v1/deleted') {
      const deletes = this.deleted
        .filter((entry) => entry.deletedAtMs >= from)
        .sort((a, b) => a.deletedAtMs - b.deletedAtMs || a.id.localeCompare(b.id))
        .map((entry) => ({ id: entry.id, deleted_at: new Date(entry.deletedAtMs).toISOString() }));
      return this.page(url, deletes);
    }
    if (url.pathname === '/v1/all') {
      const all = [...this.records.values()].sort((a, b) => a.id.localeCompare(b.id));
      return this.page(url, all.map(shown));
    }
    const byId = /^\/v1\/sessions\/(.+)$/.exec(url.pathname);
    if (byId) {
      const record = this.records.get(decodeURIComponent(byId[1] ?? ''));
      return record ? Response.json(shown(record)) : new Response('not found', { status: 404 });
    }
    return new Response('no such path', { status: 404 });
  }

  private page(url: URL, items: unknown[]): Response {
    const offset = Number(url.searchParams.get('cursor') ?? 0);
    const page = items.slice(offset, offset + this.perPage);
    const more = offset + this.perPage < items.length;
    return Response.json({
      sessions: page,
      next_cursor: more ? String(offset + this.perPage) : null,
    });
  }
}

function byTime(a: SaasRecord, b: SaasRecord): number {
  return a.updatedAtMs - b.updatedAtMs || a.id.localeCompare(b.id);
}

function shown(record: SaasRecord) {
  return {
    id: record.id,
    updated_at: new Date(record.updatedAtMs).toISOString(),
    ...record.fields,
  };
}
