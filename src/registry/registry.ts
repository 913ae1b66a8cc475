// Owns the registry's pollers and registry_meta tables (the deletion trail is deletions.ts).
import { DurableObject } from 'cloudflare:workers';
import { capGroups } from './cap-groups.ts';
import { type Deletion, newestDeletions, recordDeletion } from './deletions.ts';
import { VISIT_AGAIN_MS } from './heartbeat.ts';
import { migrateRegistry } from './schema.ts';
import {
  entryOf,
  type FaultEntry,
  type FleetGroup,
  type FleetHealth,
  type IssuedConfig,
  LIST_COLUMNS,
  type ListQuery,
  type ListRow,
  type PollerSummary,
  type RegistryEntry,
  type RegistryRecord,
  type Row,
} from './types.ts';
import { type WatchdogShare, watchdogShare } from './watchdog-slice.ts';

export type * from './types.ts';

/**
 * Which pollers exist, without waking them: a row per poller in one Durable Object's SQLite.
 * The pollers report here when their state, dead letters or health change, and otherwise
 * once every REPORT_EVERY (an hour: a heartbeat), so at 10,000 pollers it takes a few writes
 * a second.
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
        recordDeletion(this.sql, name, detail, now);
      }
    });
  }

  /**
   * The incarnation of the poller `name` the registry lists (not as being deleted; 0 for a
   * static one), or null when it lists none: its config is not read.
   */
  async incarnationOf(name: string): Promise<number | null> {
    const row = this.sql
      .exec<{ kind: string; incarnation: number }>(
        "SELECT kind, incarnation FROM pollers WHERE name = ? AND phase != 'deleting'",
        name,
      )
      .toArray()[0];
    if (row === undefined) return null;
    return row.kind === 'static' ? 0 : row.incarnation;
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

  /** What a poller reports about itself (a change, or its heartbeat), and when it is due again. */
  async report(name: string, summary: PollerSummary, now: number): Promise<boolean> {
    const cursor = this.sql.exec(
      `UPDATE pollers SET state = ?, checkpoint = ?, dead_letters = ?, at_fault = ?,
         fault_reason = ?, reported_at = ?, due_at = ?
       WHERE name = ? AND phase != 'deleting'`,
      summary.state,
      summary.checkpoint,
      summary.deadLetters,
      summary.atFault ? 1 : 0,
      summary.atFault ? summary.reason : null,
      now,
      // None from a poller on the code before due times (a deploy still under way).
      summary.dueAt ?? null,
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
   * The watchdog's share of one tick (see registry/watchdog-slice.ts): every active runtime
   * poller once in `round` ticks, and the overdue and half-way ones, each bounded by `limit`.
   */
  async watchdogSlice(
    limit: number,
    stuckFor: number,
    now: number,
    round: number,
    most = Number.POSITIVE_INFINITY,
  ): Promise<WatchdogShare> {
    const after =
      this.sql
        .exec<{ value: string }>("SELECT value FROM registry_meta WHERE key = 'watchdog_after'")
        .toArray()[0]?.value ?? '';
    const share = watchdogShare(this.sql, limit, stuckFor, now, after, round, most);
    this.sql.exec(
      "INSERT INTO registry_meta (key, value) VALUES ('watchdog_after', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      share.last,
    );
    if (share.overdue.length > 0) {
      // Handed out, each is due again later: its visit's report renews it with its own due
      // time (an overdue poller has passed its heartbeat), and one that cannot report (it
      // cannot run, or be reached) waits as long as a running poller would to report, instead
      // of heading the queue at every tick.
      this.sql.exec(
        'UPDATE pollers SET due_at = ? WHERE name IN (SELECT value FROM json_each(?))',
        now + VISIT_AGAIN_MS,
        JSON.stringify(share.overdue.map((entry) => entry.name)),
      );
    }
    return share;
  }

  /**
   * Makes these runtime pollers overdue now: a group of the watchdog's round that could not be
   * visited heads the next tick's overdue queue instead of waiting a whole round again.
   */
  async dueNow(names: string[], now: number): Promise<void> {
    this.sql.exec(
      "UPDATE pollers SET due_at = ? WHERE kind = 'runtime' AND phase = 'active' AND name IN (SELECT value FROM json_each(?))",
      now - 1,
      JSON.stringify(names),
    );
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
  async deletions(limit: number): Promise<Deletion[]> {
    return newestDeletions(this.sql, limit);
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

/** The registry's one object. */
export function registryOf(env: Env) {
  return env.REGISTRY.get(env.REGISTRY.idFromName('registry'));
}
