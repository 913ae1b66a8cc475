import { DurableObject } from 'cloudflare:workers';
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
}

export interface RegistryEntry {
  name: string;
  kind: PollerKind;
  phase: Phase;
  /** Runtime pollers: the config as written (`${NAME}` unresolved), as JSON text. */
  config: string | null;
  version: number;
  labels: Record<string, string>;
  state: string | null;
  checkpoint: number | null;
  deadLetters: number;
  reportedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** One group of the fleet: its state, kind and label values, and how many pollers it has. */
export interface FleetGroup {
  state: string | null;
  kind: string;
  labels: Record<string, string>;
  count: number;
  atFault: number;
  deadLetters: number;
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

type Row = {
  name: string;
  kind: string;
  phase: string;
  config: string | null;
  version: number;
  labels: string;
  state: string | null;
  checkpoint: number | null;
  dead_letters: number;
  reported_at: number | null;
  created_at: number;
  updated_at: number;
};

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
    { ok: true; created: boolean; version: number } | { ok: false; reason: 'static' | 'deleting' }
  > {
    const existing = this.row(name);
    if (existing?.kind === 'static') return { ok: false, reason: 'static' };
    if (existing?.phase === 'deleting') return { ok: false, reason: 'deleting' };
    const version = (existing?.version ?? 0) + 1;
    this.sql.exec(
      `INSERT INTO pollers (name, kind, phase, config, version, labels, created_at, updated_at)
       VALUES (?, 'runtime', 'configuring', ?, ?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET phase = 'configuring', config = excluded.config,
         version = excluded.version, labels = excluded.labels, updated_at = excluded.updated_at`,
      name,
      JSON.stringify(config),
      version,
      JSON.stringify(labels),
      now,
      now,
    );
    return { ok: true, created: existing === undefined, version };
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

  /** Step 1 of deleting: the row stays, in phase "deleting", until the object is erased. */
  async beginDelete(name: string, now: number): Promise<'deleting' | 'not_found' | 'static'> {
    const existing = this.row(name);
    if (existing === undefined) return 'not_found';
    if (existing.kind === 'static') return 'static';
    this.sql.exec(
      "UPDATE pollers SET phase = 'deleting', updated_at = ? WHERE name = ?",
      now,
      name,
    );
    return 'deleting';
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
      }
    });
  }

  async get(name: string): Promise<RegistryEntry | null> {
    const row = this.row(name);
    return row === undefined ? null : entryOf(row);
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
      .exec<Row>(
        `SELECT * FROM pollers WHERE ${where.join(' AND ')} ORDER BY name LIMIT ?`,
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
      `UPDATE pollers SET state = ?, checkpoint = ?, dead_letters = ?, at_fault = ?, reported_at = ?
       WHERE name = ? AND phase != 'deleting'`,
      summary.state,
      summary.checkpoint,
      summary.deadLetters,
      summary.atFault ? 1 : 0,
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
  ): Promise<{ stuck: RegistryEntry[]; slice: RegistryEntry[]; total: number }> {
    const stuck = this.sql
      .exec<Row>(
        "SELECT * FROM pollers WHERE phase != 'active' AND updated_at < ? ORDER BY updated_at LIMIT ?",
        now - stuckFor,
        limit,
      )
      .toArray()
      .map(entryOf);
    const after =
      this.sql
        .exec<{ value: string }>("SELECT value FROM registry_meta WHERE key = 'watchdog_after'")
        .toArray()[0]?.value ?? '';
    let rows = this.sql
      .exec<Row>(
        "SELECT * FROM pollers WHERE kind = 'runtime' AND phase = 'active' AND name > ? ORDER BY name LIMIT ?",
        after,
        limit,
      )
      .toArray();
    if (rows.length < limit && after !== '') {
      // Wrapped around: start again from the first name.
      const more = this.sql
        .exec<Row>(
          "SELECT * FROM pollers WHERE kind = 'runtime' AND phase = 'active' AND name <= ? ORDER BY name LIMIT ?",
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
    return { stuck, slice: rows.map(entryOf), total };
  }

  /**
   * Counts by state and kind, and by the values of the label keys asked for, for /metrics
   * and /healthz at any number of pollers: as many rows as distinct combinations, never one
   * per poller.
   */
  async summary(labelKeys: string[] = []): Promise<FleetGroup[]> {
    const columns = labelKeys.map((_, index) => `json_extract(labels, ?) AS l${index}`);
    const rows = this.sql
      .exec<Record<string, string | number | null>>(
        `SELECT state, kind, ${[...columns, 'COUNT(*) AS count', 'SUM(at_fault) AS at_fault', 'SUM(dead_letters) AS dead_letters'].join(', ')}
         FROM pollers WHERE phase != 'deleting'
         GROUP BY state, kind${labelKeys.map((_, index) => `, l${index}`).join('')}`,
        ...labelKeys.map((key) => `$."${key.replaceAll('"', '')}"`),
      )
      .toArray();
    return rows.map((row) => ({
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
  }

  /** The names of runtime pollers at fault, the first `limit` by name. */
  async atFault(limit: number): Promise<string[]> {
    return this.sql
      .exec<{ name: string }>(
        "SELECT name FROM pollers WHERE at_fault = 1 AND kind = 'runtime' AND phase = 'active' ORDER BY name LIMIT ?",
        limit,
      )
      .toArray()
      .map((row) => row.name);
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

function entryOf(row: Row): RegistryEntry {
  return {
    name: row.name,
    kind: row.kind === 'static' ? 'static' : 'runtime',
    phase:
      row.phase === 'deleting'
        ? 'deleting'
        : row.phase === 'configuring'
          ? 'configuring'
          : 'active',
    config: row.config,
    version: row.version,
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
