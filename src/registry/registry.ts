import { DurableObject } from 'cloudflare:workers';
import { type CountedGroup, capGroups } from './cap-groups.ts';
import { migrateRegistry } from './schema.ts';

/** static: declared in wrangler.toml; runtime: created with PUT /pollers/:name. */
export type PollerKind = 'static' | 'runtime';

/**
 * active: runs; configuring: its config is on its way to its object (or a crash left it
 * half-way: the watchdog finishes it); deleting: being erased (likewise).
 */
export type Phase = 'active' | 'configuring' | 'deleting';

/** What a poller tells the registry about itself, when it changes. */
export interface PollerSummary {
  state: string;
  checkpoint: number | null;
  deadLetters: number;
  /** /healthz counts it as at fault (its status has alerts). */
  atFault: boolean;
  /** Why, when at fault: its first alert, short (alerts never hold a secret). */
  reason: string | null;
}

/**
 * A poller as lists show it: never its config, which may be large (a page of a dozen 3 MB
 * configs would pass the 32 MiB an RPC value may hold, and fail the whole list).
 */
export interface RegistryEntry {
  name: string;
  kind: PollerKind;
  phase: Phase;
  version: number;
  /** Runtime pollers: which life of the name this is (never repeats; 0 for static pollers). */
  incarnation: number;
  labels: Record<string, string>;
  state: string | null;
  checkpoint: number | null;
  deadLetters: number;
  reportedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** One poller's whole row, its config with it: read one poller at a time. */
export interface RegistryRecord extends RegistryEntry {
  /** Runtime pollers: the config as written (`${NAME}` unresolved), as JSON text. */
  config: string | null;
}

/** One group of the fleet: its state, kind and label values, and how many pollers it has. */
export type FleetGroup = CountedGroup;

/** A runtime poller at fault, and why (as it last reported). */
export interface FaultEntry {
  name: string;
  reason: string | null;
}

/** What /healthz needs of the registry, in one call: the fleet's counts, and who is at fault. */
export interface FleetHealth {
  groups: FleetGroup[];
  /** The first runtime pollers at fault by name, with their reasons. */
  faults: FaultEntry[];
}

export interface ListQuery {
  limit: number;
  cursor?: string | undefined;
  /** `key=value`: only pollers with this label. */
  label?: { key: string; value: string } | undefined;
  state?: string | undefined;
  /** Part of the name. */
  search?: string | undefined;
}

/** A runtime poller's config as issued: the text, its version and its incarnation. */
export interface IssuedConfig {
  config: string;
  version: number;
  incarnation: number;
}

/** What the watchdog needs of a poller to visit it: never its config (fetched if needed). */
export type WatchdogEntry = {
  name: string;
  phase: string;
  version: number;
  incarnation: number;
};
const WATCHDOG_COLUMNS = 'name, phase, version, incarnation';
/** What a list shows: every column but the config. */
const LIST_COLUMNS =
  'name, kind, phase, version, incarnation, labels, state, checkpoint, dead_letters, reported_at, created_at, updated_at';

/**
 * The deletion trail keeps 90 days: long enough to answer "who deleted this customer's poller
 * last quarter", bounded however many pollers come and go.
 */
const DELETIONS_KEPT_MS = 90 * 24 * 60 * 60_000;
/** …and at most this many rows (the newest), so churn cannot grow the registry without bound. */
const DELETIONS_KEPT = 10_000;

type ListRow = {
  name: string;
  kind: string;
  phase: string;
  version: number;
  incarnation: number;
  labels: string;
  state: string | null;
  checkpoint: number | null;
  dead_letters: number;
  reported_at: number | null;
  created_at: number;
  updated_at: number;
};
type Row = ListRow & { config: string | null };

/**
 * Which pollers exist, without waking them: a row per poller in one Durable Object's SQLite.
 * The pollers report here only when their state, checkpoint or dead letters change (and at
 * most every few minutes otherwise), so at 10,000 pollers it takes a few writes a second.
 */
export class Registry extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrateRegistry(ctx.storage);
    this.sql = ctx.storage.sql;
  }

  /**
   * Step 1 of creating or replacing a runtime poller: the config is kept here first, in phase
   * "configuring", so that a crash before the poller's own object has it is repaired by the
   * watchdog, never left half-way. Refused for a static poller's name.
   */
  async beginPut(
    name: string,
    config: unknown,
    labels: Record<string, string>,
    now: number,
  ): Promise<
    | { ok: true; created: boolean; version: number; incarnation: number }
    | { ok: false; reason: 'static' | 'deleting' }
  > {
    return this.ctx.storage.transactionSync(() => {
      const existing = this.row(name);
      if (existing?.kind === 'static') return { ok: false, reason: 'static' } as const;
      if (existing?.phase === 'deleting') return { ok: false, reason: 'deleting' } as const;
      const version = (existing?.version ?? 0) + 1;
      // A name created again after a delete is a new incarnation: its object refuses whatever
      // an earlier one still sends (a run, a config push), however the names match.
      const incarnation = existing?.incarnation ?? this.nextIncarnation();
      this.sql.exec(
        `INSERT INTO pollers (name, kind, phase, config, version, incarnation, labels, created_at, updated_at)
         VALUES (?, 'runtime', 'configuring', ?, ?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET phase = 'configuring', config = excluded.config,
           version = excluded.version, labels = excluded.labels, updated_at = excluded.updated_at`,
        name,
        JSON.stringify(config),
        version,
        incarnation,
        JSON.stringify(labels),
        now,
        now,
      );
      return { ok: true, created: existing === undefined, version, incarnation } as const;
    });
  }

  /** The next incarnation number: one counter for every name, so none is ever handed out twice. */
  private nextIncarnation(): number {
    return Number(
      this.sql
        .exec<{ value: string }>(
          `INSERT INTO registry_meta (key, value) VALUES ('incarnations', '1')
           ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
           RETURNING value`,
        )
        .one().value,
    );
  }

  /** Step 2: the poller's object has this version of its config: it is active. */
  async activate(name: string, version: number, now: number): Promise<boolean> {
    const cursor = this.sql.exec(
      "UPDATE pollers SET phase = 'active', updated_at = ? WHERE name = ? AND version = ? AND phase = 'configuring'",
      now,
      name,
      version,
    );
    return cursor.rowsWritten > 0;
  }

  /**
   * Step 1 of deleting: the row stays, in phase "deleting", until the object is erased. Says
   * which incarnation is being deleted: its object keeps that as a tombstone.
   */
  async beginDelete(
    name: string,
    now: number,
  ): Promise<{ outcome: 'deleting'; incarnation: number } | { outcome: 'not_found' | 'static' }> {
    const existing = this.row(name);
    if (existing === undefined) return { outcome: 'not_found' };
    if (existing.kind === 'static') return { outcome: 'static' };
    this.sql.exec(
      "UPDATE pollers SET phase = 'deleting', updated_at = ? WHERE name = ?",
      now,
      name,
    );
    return { outcome: 'deleting', incarnation: existing.incarnation };
  }

  /** Step 2: the object is erased; the deletion is kept in an audit trail of its own. */
  async finishDelete(name: string, detail: Record<string, unknown>, now: number): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      const removed = this.sql.exec(
        "DELETE FROM pollers WHERE name = ? AND phase = 'deleting'",
        name,
      ).rowsWritten;
      if (removed > 0) {
        this.sql.exec(
          'INSERT INTO deletions (name, at, detail) VALUES (?, ?, ?)',
          name,
          now,
          JSON.stringify(detail),
        );
        this.pruneDeletions(now);
      }
    });
  }

  /**
   * The trail's bounds, kept as it grows: nothing older than DELETIONS_KEPT_MS, then no more
   * than the newest DELETIONS_KEPT (one indexed delete each; usually nothing to delete).
   */
  private pruneDeletions(now: number): void {
    this.sql.exec('DELETE FROM deletions WHERE at < ?', now - DELETIONS_KEPT_MS);
    this.sql.exec(
      'DELETE FROM deletions WHERE seq <= (SELECT seq FROM deletions ORDER BY seq DESC LIMIT 1 OFFSET ?)',
      DELETIONS_KEPT,
    );
  }

  /** Whether the registry lists `name` (and not as being deleted): its config is not read. */
  async lists(name: string): Promise<boolean> {
    return (
      this.sql.exec("SELECT 1 FROM pollers WHERE name = ? AND phase != 'deleting'", name).toArray()
        .length > 0
    );
  }

  /** One poller's whole row, its config included. */
  async get(name: string): Promise<RegistryRecord | null> {
    const row = this.row(name);
    return row === undefined ? null : { ...entryOf(row), config: row.config };
  }

  /**
   * A runtime poller's config as the registry issued it, read one poller at a time (a config
   * may be large: lists and the watchdog's slice never carry one).
   */
  async issued(name: string): Promise<IssuedConfig | null> {
    const row = this.sql
      .exec<{ config: string | null; version: number; incarnation: number; phase: string }>(
        "SELECT config, version, incarnation, phase FROM pollers WHERE name = ? AND kind = 'runtime'",
        name,
      )
      .toArray()[0];
    if (row === undefined || row.config === null || row.phase === 'deleting') return null;
    return { config: row.config, version: row.version, incarnation: row.incarnation };
  }

  /** A page of pollers by name, filtered by label, state or part of the name. */
  async list(query: ListQuery): Promise<{ items: RegistryEntry[]; nextCursor: string | null }> {
    const where = ['name > ?', "phase != 'deleting'"];
    const bindings: unknown[] = [query.cursor ?? ''];
    if (query.label) {
      where.push('json_extract(labels, ?) = ?');
      bindings.push(`$."${query.label.key.replaceAll('"', '')}"`, query.label.value);
    }
    if (query.state) {
      where.push('state = ?');
      bindings.push(query.state);
    }
    if (query.search) {
      where.push('instr(name, ?) > 0');
      bindings.push(query.search);
    }
    const rows = this.sql
      .exec<ListRow>(
        `SELECT ${LIST_COLUMNS} FROM pollers WHERE ${where.join(' AND ')} ORDER BY name LIMIT ?`,
        ...bindings,
        query.limit + 1,
      )
      .toArray();
    const items = rows.slice(0, query.limit).map(entryOf);
    return {
      items,
      nextCursor: rows.length > query.limit ? (items.at(-1)?.name ?? null) : null,
    };
  }

  /** What a poller reports about itself; only a change writes. */
  async report(name: string, summary: PollerSummary, now: number): Promise<boolean> {
    const cursor = this.sql.exec(
      `UPDATE pollers SET state = ?, checkpoint = ?, dead_letters = ?, at_fault = ?,
         fault_reason = ?, reported_at = ?
       WHERE name = ? AND phase != 'deleting'`,
      summary.state,
      summary.checkpoint,
      summary.deadLetters,
      summary.atFault ? 1 : 0,
      summary.atFault ? summary.reason : null,
      now,
      name,
    );
    return cursor.rowsWritten > 0;
  }

  /**
   * The static pollers of this deploy (from wrangler.toml): added, their labels kept up to
   * date, and those no longer declared removed. Writes only what changed.
   */
  async syncStatic(pollers: { name: string; labels: Record<string, string> }[], now: number) {
    const declared = new Map(pollers.map((poller) => [poller.name, JSON.stringify(poller.labels)]));
    let written = 0;
    const known = this.sql
      .exec<{ name: string; labels: string }>(
        "SELECT name, labels FROM pollers WHERE kind = 'static'",
      )
      .toArray();
    for (const row of known) {
      const labels = declared.get(row.name);
      if (labels === undefined) {
        written += this.sql.exec('DELETE FROM pollers WHERE name = ?', row.name).rowsWritten;
      } else if (labels !== row.labels) {
        written += this.sql.exec(
          'UPDATE pollers SET labels = ?, updated_at = ? WHERE name = ?',
          labels,
          now,
          row.name,
        ).rowsWritten;
      }
      declared.delete(row.name);
    }
    for (const [name, labels] of declared) {
      written += this.sql.exec(
        `INSERT INTO pollers (name, kind, phase, labels, created_at, updated_at)
         VALUES (?, 'static', 'active', ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET kind = 'static', phase = 'active', config = NULL,
           labels = excluded.labels, updated_at = excluded.updated_at`,
        name,
        labels,
        now,
        now,
      ).rowsWritten;
    }
    return { written };
  }

  /**
   * The watchdog's share of one tick: runtime pollers left half-way (configuring or
   * deleting for longer than `stuckFor`), and the next `limit` runtime pollers in name order
   * after where the last tick stopped (round robin), so a tick's work is bounded however
   * many pollers there are.
   */
  async watchdogSlice(
    limit: number,
    stuckFor: number,
    now: number,
  ): Promise<{ stuck: WatchdogEntry[]; slice: WatchdogEntry[]; total: number }> {
    const stuck = this.sql
      .exec<WatchdogEntry>(
        `SELECT ${WATCHDOG_COLUMNS} FROM pollers WHERE phase != 'active' AND updated_at < ? ORDER BY updated_at LIMIT ?`,
        now - stuckFor,
        limit,
      )
      .toArray();
    const after =
      this.sql
        .exec<{ value: string }>("SELECT value FROM registry_meta WHERE key = 'watchdog_after'")
        .toArray()[0]?.value ?? '';
    let rows = this.sql
      .exec<WatchdogEntry>(
        `SELECT ${WATCHDOG_COLUMNS} FROM pollers WHERE kind = 'runtime' AND phase = 'active' AND name > ? ORDER BY name LIMIT ?`,
        after,
        limit,
      )
      .toArray();
    if (rows.length < limit && after !== '') {
      // Wrapped around: start again from the first name.
      const more = this.sql
        .exec<WatchdogEntry>(
          `SELECT ${WATCHDOG_COLUMNS} FROM pollers WHERE kind = 'runtime' AND phase = 'active' AND name <= ? ORDER BY name LIMIT ?`,
          after,
          limit - rows.length,
        )
        .toArray();
      rows = [...rows, ...more];
    }
    const last = rows.at(-1)?.name ?? '';
    this.sql.exec(
      "INSERT INTO registry_meta (key, value) VALUES ('watchdog_after', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      last,
    );
    const total = this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM pollers').one().n;
    return { stuck, slice: rows, total };
  }

  /**
   * Counts by state and kind, and by the values of the label keys asked for, for /metrics
   * and /healthz at any number of pollers: as many rows as distinct combinations, never one
   * per poller, and at most `maxGroups` (the rest summed into one, see capGroups).
   */
  async summary(labelKeys: string[] = [], maxGroups = Infinity): Promise<FleetGroup[]> {
    const columns = labelKeys.map((_, index) => `json_extract(labels, ?) AS l${index}`);
    const rows = this.sql
      .exec<Record<string, string | number | null>>(
        `SELECT state, kind, ${[...columns, 'COUNT(*) AS count', 'SUM(at_fault) AS at_fault', 'SUM(dead_letters) AS dead_letters'].join(', ')}
         FROM pollers WHERE phase != 'deleting'
         GROUP BY state, kind${labelKeys.map((_, index) => `, l${index}`).join('')}`,
        ...labelKeys.map((key) => `$."${key.replaceAll('"', '')}"`),
      )
      .toArray();
    const groups = rows.map((row) => ({
      state: row.state === null ? null : String(row.state),
      kind: String(row.kind),
      labels: Object.fromEntries(
        labelKeys.map((key, index) => [
          key,
          row[`l${index}`] === null ? '' : String(row[`l${index}`]),
        ]),
      ),
      count: Number(row.count),
      atFault: Number(row.at_fault ?? 0),
      deadLetters: Number(row.dead_letters ?? 0),
    }));
    return capGroups(groups, maxGroups);
  }

  /** The fleet's counts by state and kind, and the first `limit` runtime pollers at fault. */
  async fleetHealth(limit: number): Promise<FleetHealth> {
    return { groups: await this.summary(), faults: await this.atFault(limit) };
  }

  /** The runtime pollers at fault and why (as they last reported), the first `limit` by name. */
  async atFault(limit: number): Promise<FaultEntry[]> {
    return this.sql
      .exec<{ name: string; fault_reason: string | null }>(
        "SELECT name, fault_reason FROM pollers WHERE at_fault = 1 AND kind = 'runtime' AND phase = 'active' ORDER BY name LIMIT ?",
        limit,
      )
      .toArray()
      .map((row) => ({ name: row.name, reason: row.fault_reason }));
  }

  /** The newest deletions first. */
  async deletions(limit: number): Promise<{ name: string; at: number; detail: string }[]> {
    return this.sql
      .exec<{ name: string; at: number; detail: string }>(
        'SELECT name, at, detail FROM deletions ORDER BY seq DESC LIMIT ?',
        limit,
      )
      .toArray();
  }

  /** Rows and bytes of the registry, for the fleet benchmark. */
  async size(): Promise<{ pollers: number; deletions: number; bytes: number }> {
    const count = (table: string) =>
      this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n;
    return {
      pollers: count('pollers'),
      deletions: count('deletions'),
      bytes: this.ctx.storage.sql.databaseSize,
    };
  }

  private row(name: string): Row | undefined {
    return this.sql.exec<Row>('SELECT * FROM pollers WHERE name = ?', name).toArray()[0];
  }
}

function entryOf(row: ListRow): RegistryEntry {
  return {
    name: row.name,
    kind: row.kind === 'static' ? 'static' : 'runtime',
    phase:
      row.phase === 'deleting'
        ? 'deleting'
        : row.phase === 'configuring'
          ? 'configuring'
          : 'active',
    version: row.version,
    incarnation: row.incarnation,
    labels: JSON.parse(row.labels) as Record<string, string>,
    state: row.state,
    checkpoint: row.checkpoint,
    deadLetters: row.dead_letters,
    reportedAt: row.reported_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The registry's one object. */
export function registryOf(env: Env) {
  return env.REGISTRY.get(env.REGISTRY.idFromName('registry'));
}
