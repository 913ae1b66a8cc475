import type { DeliveryResult } from '../src/engine/classify.ts';
import type { DeliveryItem, PageResult, Source, Update } from '../src/engine/ports.ts';
import type { Window } from '../src/engine/window.ts';
import type { VirtualClock } from './clock.ts';
import { chance, seededRandom } from './random.ts';
import { START } from './world.ts';

/**
 * The mirror scenario's upstream: records with ids and a current state (not a log of
 * versions, as the loss scenarios' World is), read through three endpoints:
 *
 * - the stream ("changed since"): live and soft-deleted records whose `updated_at` is in the
 *   window, oldest first, paged by a keyset cursor (`updated_at`, id);
 * - the deletions endpoint: `{ id, deleted_at }` for the hard deletes it logs, oldest first;
 * - the listing: every live record (soft-deleted ones left out), by id, keyset-paged.
 *
 * It changes in six ways: creates, updates (`updated_at` moves), silent changes (the content
 * moves, `updated_at` does not: a computed field, a bulk fix made behind the API), soft
 * deletes (a tombstone: `deleted_at` set, `updated_at` moved), hard deletes the deletions
 * endpoint logs, and hard deletes nothing shows (the record just vanishes).
 *
 * Every endpoint shows a change `lag` after it happened (replication lag, random per change).
 * The receiver keeps a mirror (id → content) from the deliveries, applying each `op` only when
 * its version is not older than what it holds for that id, as docs/delivery.md tells receivers to.
 */
export interface MirrorFaults {
  intervalMs: number;
  /** Ticks with upstream changes, at least (then a quiet drain of `drainTicks`). */
  ticks: number;
  /** Up to this many ticks more, drawn per seed: the last change falls anywhere in a listing period. */
  ticksJitter: number;
  drainTicks: number;
  /** Records created in the first `seedTicks` ticks, before the steady mix. */
  initialRecords: number;
  seedTicks: number;
  /** Changes per tick, on average (0.5× to 1.5×). */
  changesPerTick: number;
  /** The steady mix of changes: weights. */
  mix: Record<ChangeKind, number>;
  lagMs: number;
  pageSize: number;
  listingPageSize: number;
  pageLatencyMs: number;
  deliveryLatencyMs: number;
  /** Share of page requests (every endpoint) that fail with a 500. */
  pageFailRate: number;
  /** Share of delivery attempts that fail with a 503. */
  transientRate: number;
  /** Chance of a crash at each await point of a run. */
  crashRate: number;
}

export type ChangeKind =
  | 'create'
  | 'update'
  | 'silent'
  | 'soft-delete'
  | 'logged-delete'
  | 'unlogged-delete';

export const CHANGE_KINDS: ChangeKind[] = [
  'create',
  'update',
  'silent',
  'soft-delete',
  'logged-delete',
  'unlogged-delete',
];

export const MIRROR_FAULTS: MirrorFaults = {
  intervalMs: 60_000,
  ticks: 120,
  ticksJitter: 30,
  drainTicks: 90,
  initialRecords: 150,
  seedTicks: 5,
  changesPerTick: 6,
  mix: {
    create: 0.15,
    update: 0.6,
    silent: 0.12,
    'soft-delete': 0.05,
    'logged-delete': 0.05,
    'unlogged-delete': 0.03,
  },
  lagMs: 10_000,
  pageSize: 10,
  listingPageSize: 25,
  pageLatencyMs: 200,
  deliveryLatencyMs: 50,
  pageFailRate: 0,
  transientRate: 0,
  crashRate: 0,
};

/** A record as the upstream holds it. */
export interface RecordState {
  id: string;
  /** Its content, as a counter: any change makes a new one. */
  rev: number;
  updatedAt: number;
  /** Set by a soft delete (the record stays, as a tombstone). */
  deletedAt: number | null;
}

/** One change: its record after it (null: hard-deleted), when it happened and when it shows. */
export interface Change {
  kind: ChangeKind;
  id: string;
  happenedAt: number;
  visibleAt: number;
  after: RecordState | null;
}

/** What the receiver holds of one id: its content and the version it came with. */
interface Held {
  rev: number | null;
  versionMs: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class MirrorWorld {
  readonly changes: Change[] = [];
  /** Ticks with changes in this world: `ticks` and a share of `ticksJitter`. */
  readonly activeTicks: number;
  /** Each id's changes, in the order they happened. */
  private readonly byId = new Map<string, Change[]>();
  /** The receiver's mirror: content and version per id; a delete keeps its version (rev null). */
  private readonly held = new Map<string, Held>();
  /** When the mirror's content last changed (a record added, changed or removed). */
  lastMirrorChange = START;
  /** Deletes delivered for an id the upstream still had, live, at that moment. */
  falseDeletes = 0;
  readonly falseDeleteSample: string[] = [];
  /** Items the receiver took (upserts and deletes): every delivery that got through, repeats included. */
  delivered = { upserts: 0, deletes: 0 };
  /** Listing requests for a first page, to answer one of them empty (see emptyListing). */
  private listingsStarted = 0;
  private pageRequests = 0;
  private readonly attempts = new Map<string, number>();
  readonly trace: string[] = [];
  /** Since when each id the mirror has wrong has been wrong (sampled at every cron tick). */
  private readonly wrongSince = new Map<string, number>();
  /** The longest a record stayed wrong in the mirror after its latest change, then put right. */
  longestWrongMs = 0;
  /** Records wrong in the mirror at each sample. */
  readonly wrongOverTime: { at: number; wrong: number }[] = [];
  /** When the mirror's content of each id last changed. */
  private readonly mirrorChangedAt = new Map<string, number>();

  constructor(
    readonly seed: number,
    readonly faults: MirrorFaults,
    readonly clock: VirtualClock,
    /** The n-th listing (1-based) answers one empty, complete page; null: none does. */
    readonly emptyListing: number | null = null,
  ) {
    const random = seededRandom(seed ^ 0x3e1a0c);
    const { intervalMs } = faults;
    this.activeTicks = faults.ticks + Math.floor(random() * (faults.ticksJitter + 1));
    const times: { at: number; kind: ChangeKind | null }[] = [];
    for (let i = 0; i < faults.initialRecords; i += 1) {
      times.push({
        at: START + Math.floor(random() * intervalMs * faults.seedTicks),
        kind: 'create',
      });
    }
    for (let tick = 0; tick < this.activeTicks; tick += 1) {
      const count = Math.round(faults.changesPerTick * (0.5 + random()));
      for (let i = 0; i < count; i += 1) {
        times.push({
          at: START + tick * intervalMs + Math.floor(random() * intervalMs),
          kind: null,
        });
      }
    }
    times.sort((a, b) => a.at - b.at);
    const state = new Map<string, RecordState>();
    const live: string[] = [];
    let nextId = 0;
    let previous = START - 1;
    const total = CHANGE_KINDS.reduce((sum, kind) => sum + faults.mix[kind], 0);
    for (const { at: drawn, kind: forced } of times) {
      // Distinct instants: two changes of one id never share an updated_at by accident.
      const at = Math.max(drawn, previous + 1);
      previous = at;
      let kind: ChangeKind = forced ?? 'create';
      if (forced === null && live.length > 0) {
        let pick = random() * total;
        for (const candidate of CHANGE_KINDS) {
          pick -= faults.mix[candidate];
          if (pick < 0) {
            kind = candidate;
            break;
          }
        }
      }
      let id: string;
      let after: RecordState | null;
      if (kind === 'create') {
        id = `m${String(nextId++).padStart(4, '0')}`;
        after = { id, rev: 1, updatedAt: at, deletedAt: null };
        live.push(id);
      } else {
        const index = Math.floor(random() * live.length);
        id = live[index] as string;
        const before = state.get(id) as RecordState;
        const rev = before.rev + 1;
        switch (kind) {
          case 'update':
            after = { ...before, rev, updatedAt: at };
            break;
          case 'silent':
            after = { ...before, rev };
            break;
          case 'soft-delete':
            after = { ...before, rev, updatedAt: at, deletedAt: at };
            break;
          default:
            after = null;
        }
        if (after === null || after.deletedAt !== null) live.splice(index, 1);
      }
      if (after === null) state.delete(id);
      else state.set(id, after);
      const change: Change = {
        kind,
        id,
        happenedAt: at,
        visibleAt: at + Math.floor(random() * faults.lagMs),
        after,
      };
      this.changes.push(change);
      const list = this.byId.get(id) ?? [];
      list.push(change);
      this.byId.set(id, list);
    }
  }

  /** When the upstream last changed. */
  get lastChangeAt(): number {
    return this.changes.at(-1)?.happenedAt ?? START;
  }

  log(line: string): void {
    if (this.trace.length < 5_000) this.trace.push(`${iso(this.clock.now)} ${line}`);
  }

  /** A record as the endpoints show it at `now`: the state after its latest change visible by then. */
  private shown(id: string, now: number): RecordState | null {
    const list = this.byId.get(id) ?? [];
    for (let i = list.length - 1; i >= 0; i -= 1) {
      const change = list[i] as Change;
      if (change.visibleAt <= now) return change.after;
    }
    return null;
  }

  /** A record as it really is at `at` (what the mirror is compared with). */
  truth(id: string, at: number): RecordState | null {
    const list = this.byId.get(id) ?? [];
    for (let i = list.length - 1; i >= 0; i -= 1) {
      const change = list[i] as Change;
      if (change.happenedAt <= at) return change.after;
    }
    return null;
  }

  private async page(slow = 1): Promise<PageResult | null> {
    const request = this.pageRequests++;
    await this.clock.sleep(this.faults.pageLatencyMs * slow);
    if (chance(this.seed, 'mirror-page', request) < this.faults.pageFailRate) {
      return { ok: false, kind: 'transient', error: 'HTTP 500 (simulated)' };
    }
    return null;
  }

  /** The stream: records (tombstones too) whose updated_at is in the window, oldest first. */
  readonly stream: Source = {
    fetchPage: async (window: Window, cursor: string | null) => {
      const failed = await this.page();
      if (failed) return failed;
      const now = this.clock.now;
      const shown: RecordState[] = [];
      for (const id of this.byId.keys()) {
        const record = this.shown(id, now);
        if (record === null || !inWindow(record.updatedAt, window)) continue;
        shown.push(record);
      }
      const rows = shown.map((record) => ({ at: record.updatedAt, id: record.id, record }));
      return keysetPage(rows, cursor, this.faults.pageSize, (row) =>
        update(row.id, row.at, recordBody(row.record)),
      );
    },
  };

  /** The deletions endpoint: the hard deletes it logs, by deleted_at, oldest first. */
  readonly deletions: Source = {
    fetchPage: async (window: Window, cursor: string | null) => {
      const failed = await this.page();
      if (failed) return failed;
      const now = this.clock.now;
      const rows = this.changes
        .filter(
          (change) =>
            change.kind === 'logged-delete' &&
            change.visibleAt <= now &&
            inWindow(change.happenedAt, window),
        )
        .map((change) => ({ at: change.happenedAt, id: change.id, record: null }));
      return keysetPage(rows, cursor, this.faults.pageSize, (row) =>
        update(row.id, row.at, { id: row.id, deleted_at: iso(row.at) }),
      );
    },
  };

  /**
   * The listing: every live record, whole, by id (the window is ignored); with `softDeleted`,
   * the tombstones too.
   */
  listing(softDeleted = false): Source {
    return {
      fetchPage: async (_window: Window, cursor: string | null) => {
        const failed = await this.page();
        if (failed) return failed;
        if (cursor === null) this.listingsStarted += 1;
        if (cursor === null && this.listingsStarted === this.emptyListing) {
          this.log(`listing ${this.listingsStarted} answers an empty, complete page`);
          return { ok: true, updates: [], malformed: [], next: null };
        }
        const now = this.clock.now;
        const ids = [...this.byId.keys()]
          .filter((id) => cursor === null || id > cursor)
          .filter((id) => {
            const record = this.shown(id, now);
            return record !== null && (softDeleted || record.deletedAt === null);
          })
          .sort();
        const page = ids.slice(0, this.faults.listingPageSize);
        const updates = page.map((id) => {
          const record = this.shown(id, now) as RecordState;
          return update(id, record.updatedAt, recordBody(record));
        });
        const next = ids.length > page.length ? (page.at(-1) ?? null) : null;
        return { ok: true, updates, malformed: [], next };
      },
    };
  }

  /** The receiver: applies each item to the mirror, unless an item of a newer version came first. */
  async deliver(items: DeliveryItem[]): Promise<DeliveryResult> {
    await this.clock.sleep(this.faults.deliveryLatencyMs);
    for (const { idempotencyKey } of items) {
      const attempt = (this.attempts.get(idempotencyKey) ?? 0) + 1;
      this.attempts.set(idempotencyKey, attempt);
      if (chance(this.seed, 'mirror-deliver', idempotencyKey, attempt) < this.faults.transientRate)
        return { kind: 'retry', error: 'HTTP 503 (simulated)' };
    }
    for (const item of items) this.apply(item);
    return { kind: 'delivered' };
  }

  private apply({ update: { id, versionMs, record }, op }: DeliveryItem): void {
    const now = this.clock.now;
    if (op === 'delete') {
      this.delivered.deletes += 1;
      const real = this.truth(id, now);
      if (real !== null && real.deletedAt === null) {
        this.falseDeletes += 1;
        if (this.falseDeleteSample.length < 5)
          this.falseDeleteSample.push(`${id} at ${iso(now)} (version ${iso(versionMs)})`);
        this.log(`false delete of ${id}`);
      }
    } else {
      this.delivered.upserts += 1;
    }
    const before = this.held.get(id);
    if (before !== undefined && versionMs < before.versionMs) return; // older than held
    const rev = op === 'delete' ? null : (record as { rev: number }).rev;
    if ((before?.rev ?? null) !== rev) {
      this.lastMirrorChange = now;
      this.mirrorChangedAt.set(id, now);
    }
    this.held.set(id, { rev, versionMs });
  }

  /**
   * Samples the mirror against the upstream at `at`. A record is wrong from its latest change
   * until the delivery (or the change) that made the mirror right again: the longest such
   * spell is kept. Measured from the record's latest change, so a record changed again while
   * wrong starts a new spell (a change it could not have had before).
   */
  sample(at: number): void {
    let wrong = 0;
    for (const id of this.byId.keys()) {
      const since = this.wrongSince.get(id);
      if (this.isWrong(id, at)) {
        wrong += 1;
        this.wrongSince.set(id, this.changedAt(id, at));
      } else if (since !== undefined) {
        const rightAt = Math.max(this.mirrorChangedAt.get(id) ?? since, this.changedAt(id, at));
        this.longestWrongMs = Math.max(this.longestWrongMs, rightAt - since);
        this.wrongSince.delete(id);
      }
    }
    this.wrongOverTime.push({ at, wrong });
  }

  /** When the record last changed, up to `at`. */
  private changedAt(id: string, at: number): number {
    const list = this.byId.get(id) ?? [];
    for (let i = list.length - 1; i >= 0; i -= 1) {
      const change = list[i] as Change;
      if (change.happenedAt <= at) return change.happenedAt;
    }
    return START;
  }

  /** Records wrong at the last sample, and since when the oldest of them has been. */
  stillWrong(): { count: number; since: number | null } {
    const since = [...this.wrongSince.values()];
    return { count: since.length, since: since.length === 0 ? null : Math.min(...since) };
  }

  private isWrong(id: string, at: number): boolean {
    const real = this.truth(id, at);
    const upstream = real === null || real.deletedAt !== null ? null : real.rev;
    return (this.held.get(id)?.rev ?? null) !== upstream;
  }

  /** The mirror against the upstream as it is at `at`. */
  compare(at: number): { ghosts: number; stale: number; missing: number } {
    let ghosts = 0;
    let stale = 0;
    let missing = 0;
    for (const id of this.byId.keys()) {
      const real = this.truth(id, at);
      const mirrored = this.held.get(id)?.rev ?? null;
      const upstream = real === null || real.deletedAt !== null ? null : real.rev;
      if (mirrored !== null && upstream === null) ghosts += 1;
      else if (mirrored === null && upstream !== null) missing += 1;
      else if (mirrored !== upstream) stale += 1;
    }
    return { ghosts, stale, missing };
  }
}

function inWindow(at: number, window: Window): boolean {
  return at >= window.from && (!window.bounded || at < window.to);
}

/** A record as an endpoint returns it. */
function recordBody(record: RecordState): Record<string, unknown> {
  return {
    id: record.id,
    rev: record.rev,
    updated_at: iso(record.updatedAt),
    deleted_at: record.deletedAt === null ? null : iso(record.deletedAt),
  };
}

function update(id: string, at: number, record: unknown): Update {
  return { id, version: iso(at), versionMs: at, record };
}

/**
 * One page of rows ordered by (at, id), after the keyset cursor "at:id": a row that moves
 * (updated again) or goes (deleted) between two pages never shifts another out of a page, as
 * an offset would.
 */
function keysetPage<T extends { at: number; id: string }>(
  rows: T[],
  cursor: string | null,
  size: number,
  toUpdate: (row: T) => Update,
): PageResult {
  rows.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  let after = rows;
  if (cursor !== null) {
    const split = cursor.indexOf(':');
    const at = Number(cursor.slice(0, split));
    const id = cursor.slice(split + 1);
    after = rows.filter((row) => row.at > at || (row.at === at && row.id > id));
  }
  const page = after.slice(0, size);
  const last = page.at(-1);
  const next = after.length > page.length && last ? `${last.at}:${last.id}` : null;
  return { ok: true, updates: page.map(toUpdate), malformed: [], next };
}
