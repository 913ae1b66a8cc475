import { isStatic } from '../catalog.ts';
import { SqliteFreshness } from './freshness-store.ts';
import { Incarnation } from './incarnation.ts';
import { migrate } from './migrations.ts';
import { otherLife } from './other-life.ts';
import { OwnSecrets } from './own-secrets.ts';
import type { OtherLife } from './rpc.ts';
import { SqliteStore } from './store/index.ts';
import { wipeStorage } from './wipe-storage.ts';
import { type Wiring, WiringCache } from './wiring.ts';

/**
 * Who a poller's object is and which life of it runs (R14): its name, its `Incarnation`,
 * what was built for that life (its stores, its secrets decrypted, its wiring), the guard of
 * every write meant for a life, and the erase that ends one. The object
 * (durable-object.ts) asks it for all of these, never keeps them itself: an erase replaces
 * them.
 */
export class ObjectLife {
  /** This life of the object (R14): erase() ends it, and what was built for it stops. */
  private life = new Incarnation();
  private sqlite: SqliteStore;
  private freshnessStore: SqliteFreshness | null = null;
  /** The poller's own secrets, decrypted: kept for this instance's life, dropped on a change. */
  readonly secrets: OwnSecrets;
  /** The poller's config, wired, kept while nothing it was built from changed. */
  private readonly wirings: WiringCache;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
  ) {
    migrate(ctx.storage);
    this.sqlite = new SqliteStore(ctx.storage, this.life);
    this.secrets = new OwnSecrets(ctx.storage.sql, env);
    this.wirings = new WiringCache(env, this.secrets);
    // A deploy that declares a static poller under the name of a deleted runtime poller: the
    // tombstone refuses only that poller's incarnations, and the static poller starts clean.
    const name = this.name;
    if (name !== null && this.store.meta.tombstoneOnly() && isStatic(env, name)) {
      const { epoch } = this.store.read().lease;
      void ctx.blockConcurrencyWhile(() => this.wipe(this.store.meta.erasedIncarnation(), epoch));
    }
  }

  /** This life: a run compares it before and after, to tell whether an erase came between. */
  get incarnation(): Incarnation {
    return this.life;
  }

  /** The store of this life. */
  get store(): SqliteStore {
    return this.sqlite;
  }

  /** Nudges and observed lateness, beside the poller's store (migration 11). */
  get freshness(): SqliteFreshness {
    if (this.freshnessStore === null) {
      this.freshnessStore = new SqliteFreshness(this.ctx.storage, this.life);
      // Its rows are billed like the store's: counted with them (storageStats).
      this.sqlite.countRowsOf(this.freshnessStore);
    }
    return this.freshnessStore;
  }

  /**
   * The poller's name: its id's, which every caller reaches it by (`idFromName`, the alarm
   * included), else the one stored for an id without a name. Null only for an object reached
   * by an id without a name before any name was stored: no poller's.
   */
  get name(): string | null {
    return this.ctx.id.name ?? this.store.meta.name();
  }

  /** The poller's name (see `name`); an object without one serves no poller. */
  named(): string {
    const name = this.name;
    if (name === null) {
      throw new Error('this Poller object has no name: reach it with idFromName(poller)');
    }
    return name;
  }

  /**
   * A call for the poller: notes when it first came, so that a poller that never runs is
   * noticed (status `silent`), and keeps the name for an id without one. An erased object is
   * no poller until the registry configures a new incarnation: a call that reaches it
   * meanwhile leaves nothing behind. Returns the name.
   */
  seen(): string {
    const name = this.named();
    if (this.store.meta.tombstoneOnly()) return name;
    this.store.meta.rememberName(name);
    this.store.presence.seen(Date.now());
    return name;
  }

  /**
   * A write meant for life `meant` of the poller: the name, as seen() gives it, or why the
   * write is refused here (see otherLife), with nothing written (R14).
   */
  writer(meant: number): string | OtherLife {
    return otherLife(this.env, this.named(), this.store.meta, meant) ?? this.seen();
  }

  /** The poller's config, wired, with its own secrets decrypted for `${NAME}`. */
  wiring(name: string): Promise<Wiring> {
    return this.wirings.of(name, this.store, this.life);
  }

  /** Binds the secrets set before secrets were bound (see WiringCache.bindUnbound). */
  async bindUnbound(name: string): Promise<void> {
    await this.wirings.bindUnbound(name, this.store);
  }

  /**
   * Takes up a runtime poller's `incarnation`, for a config pushed for it: `refused` when it
   * was erased here or is older than the one running, `same` when it runs already, `new` when
   * the object now runs it (from empty tables, if another life was here).
   */
  async enter(incarnation: number): Promise<'refused' | 'same' | 'new'> {
    const meta = this.store.meta;
    // R14: a push for an incarnation erased here (a DELETE answered before it arrived) or
    // older than the one running is refused: no earlier life of the name comes back.
    const running = meta.incarnation();
    if (incarnation <= meta.erasedIncarnation() || incarnation < (running ?? 0)) return 'refused';
    if (running === incarnation) return 'same';
    // A new incarnation starts from empty tables, whatever reached the object since its last
    // erase or ran here before (a crash between the registry's steps can make it forget an
    // older one). A fresh object, or one from before incarnations, keeps what it has.
    if (running !== null || meta.erasedIncarnation() > 0) await this.erase(running ?? 0);
    // Before the name: an erased object takes a name only with a new incarnation.
    this.store.meta.setIncarnation(incarnation);
    return 'new';
  }

  /**
   * Stops the poller for good and erases its storage, keeping only a tombstone:
   * `incarnation` (the registry's, for a runtime poller) is refused from now on, and every
   * admin write until a new life starts (a configure of a newer incarnation, or at once a
   * static poller declared under the name: see wipeStorage). Ends this life first, before any
   * await: a run still going sends nothing more and commits nothing (R14); every cache of the
   * object goes with it (secrets, wiring, freshness, nudge auth). No other call is let in
   * until the object is fresh again.
   */
  async erase(incarnation: number): Promise<void> {
    const epoch = this.store.read().lease.epoch;
    const meta = this.store.meta;
    const tombstone = Math.max(incarnation, meta.incarnation() ?? 0, meta.erasedIncarnation());
    this.end();
    await this.ctx.blockConcurrencyWhile(() => this.wipe(tombstone, epoch));
  }

  /** Ends this life: what was built for it stops, and every cache of it goes (R14). */
  private end(): void {
    this.life.end();
    this.life = new Incarnation();
    this.secrets.forget();
    this.wirings.forget();
    this.freshnessStore = null;
  }

  /** Empties the object but for a tombstone and the epoch reached, once its life ended. */
  private async wipe(tombstone: number, epoch: number): Promise<void> {
    const name = this.name;
    const staticLife = name !== null && isStatic(this.env, name);
    const erased = { tombstone, epoch, staticLife };
    this.sqlite = await wipeStorage(this.ctx.storage, this.life, erased);
  }
}
