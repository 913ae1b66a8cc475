// Owns the meta table: its only writer, the poller's name included.
import type { StoreHost } from './host.ts';

/** A runtime poller's config as its object keeps it. */
export interface StoredRuntimeConfig {
  /** The config, parsed from `text`. */
  config: unknown;
  /** The config as written (JSON, `${NAME}` unresolved). */
  text: string;
  version: number;
}

/**
 * Owns the `meta` table (migration 1), and is its only writer: what the object knows of
 * itself, one key each. `name` the poller's name (for an object whose id has none); `config`
 * and `config_version` a runtime poller's config; `incarnation` the runtime incarnation it
 * runs (0: a static poller's life, started over a tombstone) and `erased_incarnation` the
 * newest one erased here (R14); `registered` that the registry lists it; `next_paths` which
 * next-page body paths its pages had (NextPaths).
 */
export class ObjectMeta {
  constructor(private readonly host: StoreHost) {}

  /** The poller's name as stored by rememberName, or null. */
  name(): string | null {
    return this.get('name');
  }

  /** Stores the poller's name, once: the alarm of an object whose id has no name needs it. */
  rememberName(name: string): void {
    // Read first: a write, even one that changes nothing, writes the deferred state row first.
    if (this.name() !== null) return;
    this.host.write("INSERT OR IGNORE INTO meta (key, value) VALUES ('name', ?)", name);
  }

  /** A runtime poller's config as written (JSON) and its version; null for a static poller. */
  runtimeConfig(): StoredRuntimeConfig | null {
    const text = this.get('config');
    const version = Number(this.get('config_version') ?? 0);
    return text === null ? null : { config: JSON.parse(text) as unknown, text, version };
  }

  setRuntimeConfig(config: string, version: number): void {
    this.host.transaction(() => {
      this.set('config', config);
      this.set('config_version', String(version));
    });
  }

  /** The incarnation this object runs (set by configure; 0 for a static poller's), or null. */
  incarnation(): number | null {
    const value = this.get('incarnation');
    return value === null ? null : Number(value);
  }

  setIncarnation(incarnation: number): void {
    this.set('incarnation', String(incarnation));
  }

  /** The newest incarnation erased here (0 when none): a config for it or an older one is refused. */
  erasedIncarnation(): number {
    return Number(this.get('erased_incarnation') ?? 0);
  }

  /** Just after an erase, in the fresh table: the tombstone of the incarnation erased (R14). */
  markErased(incarnation: number): void {
    this.set('erased_incarnation', String(incarnation));
  }

  /**
   * Erased, and no new incarnation configured since: no poller, until the registry configures
   * one. A call that reaches it meanwhile leaves nothing behind.
   */
  tombstoneOnly(): boolean {
    return this.erasedIncarnation() > 0 && this.incarnation() === null;
  }

  /** The registry lists this poller (it was configured, or the watchdog visited it). */
  registered(): boolean {
    return this.get('registered') === '1';
  }

  markRegistered(): void {
    if (!this.registered()) this.set('registered', '1');
  }

  /** The memo of next-page body paths (JSON, written by store/next-paths.ts), or null. */
  nextPaths(): string | null {
    return this.get('next_paths');
  }

  setNextPaths(json: string): void {
    this.set('next_paths', json);
  }

  private get(key: string): string | null {
    return (
      this.host.sql
        .exec<{ value: string }>('SELECT value FROM meta WHERE key = ?', key)
        .toArray()[0]?.value ?? null
    );
  }

  private set(key: string, value: string): void {
    this.host.write(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      key,
      value,
    );
  }
}
