import type { FakeHost } from '../fakes.ts';

/** One version of a record of a vendor's API: its id, its change time, and when it shows. */
export interface VendorVersion {
  id: string;
  /** When it changed (epoch ms), at the vendor's precision. */
  at: number;
  /** Not listed before this time: the vendor's replication lag. */
  visibleAt: number;
  /** A delete the vendor shows (a tombstone, `status = "cancelled"`, `archived = true`). */
  deleted: boolean;
}

/** A request the vendor's documentation does not allow: answered 400, and remembered. */
export class Refused extends Error {}

/** A request as the fake saw it. */
export interface SeenRequest {
  method: string;
  url: URL;
  body: unknown;
  headers: Headers;
}

/** The `{ offset }` of a page in a listing, and the page. */
export interface Slice<T> {
  rows: T[];
  /** The offset of the next page, or null when this one is the last. */
  next: number | null;
}

/**
 * What every vendor fake shares: records that change (and show late), strict checks of each
 * request against the vendor's documented shape, and small pages (`pageCap`), so every
 * example pages. A request the vendor would refuse is answered 400 and kept in `refused`:
 * a test asserts there is none, so a config that sends the wrong method, body, parameter or
 * time format fails its test.
 */
export abstract class FakeVendor implements FakeHost {
  /** The host the example's URLs name (installFakes routes it here). */
  abstract readonly host: string;
  /** The vendor's stamp precision: a change at 10:00:42.5 shows as 10:00:42 (or 10:00). */
  readonly precisionMs: number = 1_000;
  /** What the vendor writes before a record's number in its ids (`001` for Salesforce). */
  readonly idPrefix: string = '';
  readonly versions: VendorVersion[] = [];
  readonly refused: string[] = [];
  readonly requests: SeenRequest[] = [];
  /** The most records one page holds, whatever the request asks for. */
  pageCap = 2;

  /** A record changed at `at` (floored to the vendor's precision), shown now or later. */
  put(id: string, at: number, options: { hidden?: boolean; deleted?: boolean } = {}): number {
    const stamped = Math.floor(at / this.precisionMs) * this.precisionMs;
    this.versions.push({
      id,
      at: stamped,
      visibleAt: options.hidden ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY,
      deleted: options.deleted ?? false,
    });
    return stamped;
  }

  /** Every hidden version shows from now on: the vendor's lag is over. */
  reveal(): void {
    for (const version of this.versions) {
      if (version.visibleAt === Number.POSITIVE_INFINITY) version.visibleAt = Date.now();
    }
  }

  async handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const text = request.method === 'GET' ? '' : await request.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    const seen = { method: request.method, url, body, headers: request.headers };
    this.requests.push(seen);
    try {
      return this.answer(seen);
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      this.refused.push(`${request.method} ${url.pathname}${url.search}: ${error.message}`);
      return Response.json({ error: error.message }, { status: 400 });
    }
  }

  /** The vendor's answer to a request its docs allow; throws Refused otherwise. */
  protected abstract answer(request: SeenRequest): Response;

  /** Refuses the request unless `condition` holds. */
  protected require(condition: unknown, why: string): asserts condition {
    if (!condition) throw new Refused(why);
  }

  /**
   * Each record's current version as the vendor lists it now: the latest shown version per
   * id, kept when its change time is within [from, to) (or (from, to) for a strict filter),
   * oldest first (ties by id).
   */
  protected changed(from: number, to = Number.POSITIVE_INFINITY, strict = false) {
    const now = Date.now();
    const latest = new Map<string, VendorVersion>();
    for (const version of this.versions) {
      if (version.visibleAt > now) continue;
      const known = latest.get(version.id);
      if (!known || version.at >= known.at) latest.set(version.id, version);
    }
    return [...latest.values()]
      .filter((v) => (strict ? v.at > from : v.at >= from) && v.at < to)
      .sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
  }

  /** The offset an opaque cursor of this fake carries (`c<offset>`); none: the first page. */
  protected offsetOf(cursor: string | null | undefined): number {
    if (cursor === null || cursor === undefined) return 0;
    const match = /^c(\d+)$/.exec(cursor);
    this.require(match !== null, `unknown cursor ${JSON.stringify(cursor)}`);
    return Number(match[1]);
  }

  /** The page at `offset` of `rows`: at most `asked` rows, and never more than `pageCap`. */
  protected slice<T>(rows: T[], offset: number, asked = this.pageCap): Slice<T> {
    const size = Math.min(asked, this.pageCap);
    const end = offset + size;
    return { rows: rows.slice(offset, end), next: end < rows.length ? end : null };
  }
}

/** ISO 8601 in whole seconds with `Z`: `2026-01-01T10:00:00Z`. */
export const isoSeconds = (ms: number) =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** A JSON object of a request's body, or undefined: what a fake reads a body's parts with. */
export const record = (value: unknown) =>
  value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
