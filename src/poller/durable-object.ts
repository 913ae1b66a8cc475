import { DurableObject } from 'cloudflare:workers';
import { isStatic } from '../catalog.ts';
import { audit, type CheckpointResult, moveCheckpoint } from './admin.ts';
import {
  discardDeadLetter,
  listDeadLetters,
  queuedDeadLetter,
  type ReplayResult,
  replayDeadLetter,
} from './dead-letters.ts';
import { type EngineOf, engineOf } from './engine-port.ts';
import { SqliteFreshness } from './freshness-store.ts';
import { Incarnation } from './incarnation.ts';
import { migrate } from './migrations.ts';
import { isNudgeToken } from './nudge-auth.ts';
import { otherLife } from './other-life.ts';
import { OwnSecrets } from './own-secrets.ts';
import { reconcileAdmin } from './reconcile-admin.ts';
import { reportToRegistry } from './registry-report.ts';
import type {
  ConfigureReply,
  DeadLetterPage,
  DiscardReply,
  IssuedConfig,
  Misconfigured,
  NudgeRpcReply,
  OtherLife,
  PollerRpc,
  PutSecretReply,
  QueuedDeadLetter,
  ReconcileReply,
  RunNowReply,
  SealedSecretListing,
  StorageStats,
  TriggerReply,
  VisitReply,
} from './rpc.ts';
import { reachOfOwn } from './secret-bounds.ts';
import type { PollerStatus } from './status.ts';
import { statusOf } from './status-of.ts';
import type { StoredRun } from './store/history.ts';
import { SqliteStore } from './store/index.ts';
import { wipeStorage } from './wipe-storage.ts';
import { type Wiring, WiringCache } from './wiring.ts';

/**
 * One poller: owns its lease, checkpoint, ledger and history in SQLite, and runs the
 * engine. Everything it knows is in storage; the alarm is derived from it. It is reached by
 * `idFromName(poller)`, and knows its name from its id (see `name`).
 */
export class Poller extends DurableObject<Env> implements PollerRpc {
  /** This life of the object (R14): erase() ends it, and what was built for it stops. */
  private incarnation = new Incarnation();
  private sqlite: SqliteStore;
  private freshnessStore: SqliteFreshness | null = null;
  /** The poller's own secrets, decrypted: kept for this instance's life, dropped on a change. */
  private readonly secrets: OwnSecrets;
  /** The poller's config, wired, kept while nothing it was built from changed. */
  private readonly wirings: WiringCache;

  private get store(): SqliteStore {
    return this.sqlite;
  }

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage);
    this.sqlite = new SqliteStore(ctx.storage, this.incarnation);
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

  /**
   * The poller's name: its id's, which every caller reaches it by (`idFromName`, the alarm
   * included), else the one stored for an id without a name. Null only for an object reached
   * by an id without a name before any name was stored: no poller's.
   */
  private get name(): string | null {
    return this.ctx.id.name ?? this.store.meta.name();
  }

  async trigger(kind: 'cron' | 'manual'): Promise<TriggerReply> {
    const engine = await this.engine(this.seen());
    if (!engine.ok) return { outcome: 'misconfigured', errors: engine.errors };
    return engine.engine.trigger(kind);
  }

  async status(): Promise<PollerStatus> {
    const name = this.seen();
    const wiring = await this.wiring(name);
    const alarm = await this.ctx.storage.getAlarm();
    return statusOf(name, wiring, this.store, this.freshness, this.secrets, alarm);
  }

  /** POST /pollers/:name/reconcile (`start`) and /reconcile/confirm (`confirm`). */
  async reconcile(action: 'start' | 'confirm'): Promise<ReconcileReply> {
    const name = this.seen();
    const engine = await this.engine(name);
    if (!engine.ok) return { outcome: 'misconfigured', errors: engine.errors };
    return reconcileAdmin(this.store, name, engine, action, Date.now());
  }

  /**
   * A nudge (POST /pollers/:name/nudge): "something changed upstream, poll soon". `token` is
   * the nudge token the caller presented, checked here against the poller's NUDGE_TOKEN
   * secret; null when the route has already checked ADMIN_TOKEN.
   */
  async nudge(token: string | null): Promise<NudgeRpcReply> {
    if (token !== null) {
      const own = await this.secrets.values(this.named());
      if (!own.ok || !(await isNudgeToken(own.values, token))) return { outcome: 'unauthorized' };
    }
    const engine = await this.engine(this.seen());
    if (!engine.ok) return { outcome: 'ignored', reason: 'misconfigured' };
    return engine.engine.nudge();
  }

  /** Nudges and observed lateness, beside the poller's store (migration 11). */
  private get freshness(): SqliteFreshness {
    if (this.freshnessStore === null) {
      this.freshnessStore = new SqliteFreshness(this.ctx.storage, this.incarnation);
      // Its rows are billed like the store's: counted with them (storageStats).
      this.sqlite.countRowsOf(this.freshnessStore);
    }
    return this.freshnessStore;
  }

  async runs(limit: number): Promise<StoredRun[]> {
    return this.store.history.runs(limit);
  }

  async run(id: number): Promise<StoredRun | null> {
    return this.store.history.run(id);
  }

  async runNow(): Promise<RunNowReply> {
    const name = this.seen();
    const engine = await this.engine(name);
    if (!engine.ok) return { outcome: 'misconfigured', errors: engine.errors };
    const life = this.incarnation;
    const reply = await engine.engine.runNow();
    const erased = life !== this.incarnation; // then nothing of it is kept, history included
    if (!erased) {
      const outcome = reply.outcome === 'ran' ? reply.run.outcome : reply.outcome;
      audit(this.store, name, 'run.manual', { outcome }, Date.now());
      await this.report(name);
    }
    if (reply.outcome !== 'ran') return reply;
    const { run } = reply;
    if (erased) return { ...reply, run: { ...run, id: null } };
    // Its line of history, found by its lease and start (a skipped trigger may follow it).
    const kept = this.store.history
      .runs(10)
      .find((line) => line.epoch === run.epoch && line.startedAt === run.startedAt);
    return { ...reply, run: { ...run, id: kept?.id ?? null } };
  }

  async setPaused(
    meant: number,
    paused: boolean,
    reason: string | null,
  ): Promise<{ paused: boolean } | OtherLife> {
    const name = this.writer(meant);
    if (typeof name !== 'string') return name;
    this.store.setPaused(paused);
    audit(this.store, name, paused ? 'poller.paused' : 'poller.resumed', { reason }, Date.now());
    const engine = await this.engine(name);
    // Resumed, a self-scheduled poller books its next tick again (the ones it missed are not
    // made up: the next window covers them).
    if (engine.ok) await engine.engine.ensureScheduled();
    else if (paused) await this.idleUnlessLeased();
    await this.report(name);
    return { paused };
  }

  /**
   * A runtime poller's config (as written, `${NAME}` unresolved), from the registry: kept
   * here so that the poller runs without asking the registry, and scheduled from it. A new
   * version replaces the old; the checkpoint, ledger and dead letters stay.
   */
  async configure(config: string, version: number, incarnation: number): Promise<ConfigureReply> {
    const meta = this.store.meta;
    // R14: a push for an incarnation erased here (a DELETE answered before it arrived) or
    // older than the one running is refused: no earlier life of the name comes back.
    const running = meta.incarnation();
    if (incarnation <= meta.erasedIncarnation() || incarnation < (running ?? 0)) {
      return {
        ok: false,
        refused: 'erased',
        errors: [`poller "${this.named()}": deleted meanwhile`],
      };
    }
    // A new incarnation starts from empty tables, whatever reached the object since its last
    // erase or ran here before (a crash between the registry's steps can make it forget an
    // older one). A fresh object, or one from before incarnations, keeps what it has.
    if (running !== incarnation && (running !== null || meta.erasedIncarnation() > 0)) {
      await this.erase(running ?? 0);
    }
    // Before the name: an erased object takes a name only with a new incarnation.
    if (running !== incarnation) this.store.meta.setIncarnation(incarnation);
    const name = this.seen();
    const stored = this.store.meta.runtimeConfig();
    if (stored !== null && running === incarnation && stored.version > version)
      return { ok: true, version: stored.version };
    // Secrets set before they were bound are bound under the config they were set for (R18).
    if (stored !== null) await this.wirings.bindUnbound(name, this.store);
    this.store.meta.setRuntimeConfig(config, version);
    this.store.meta.markRegistered();
    this.store.setNextTick(null); // the schedule may have changed: booked again below
    const action = stored === null ? 'config.created' : 'config.replaced';
    audit(this.store, name, action, { version }, Date.now());
    const engine = await this.engine(name);
    if (engine.ok) await engine.engine.ensureScheduled();
    else await this.idleUnlessLeased();
    await this.report(name);
    return engine.ok ? { ok: true, version } : { ok: false, errors: engine.errors };
  }

  /**
   * A poller that cannot run keeps no alarm, but for the lease of a run still going: its
   * alarm is that run's crash recovery (R5), needed until the run ends or dies.
   */
  private async idleUnlessLeased(): Promise<void> {
    if (!this.store.read().lease.held) await this.ctx.storage.deleteAlarm();
  }

  /**
   * Stops the poller for good and erases its storage (DELETE /pollers/:name), keeping only a
   * tombstone: `incarnation` (the registry's, for a runtime poller) is refused from now on,
   * and every admin write until a new life starts (a configure of a newer incarnation, or at
   * once a static poller declared under the name: see wipeStorage). Ends this life first, before any await: a run still going sends nothing more and
   * commits nothing (R14); every cache of the object goes with it (secrets, wiring,
   * freshness, nudge auth). No other call is let in until the object is fresh again.
   */
  async erase(incarnation = 0): Promise<void> {
    const epoch = this.store.read().lease.epoch;
    const meta = this.store.meta;
    const tombstone = Math.max(incarnation, meta.incarnation() ?? 0, meta.erasedIncarnation());
    this.endLife();
    await this.ctx.blockConcurrencyWhile(() => this.wipe(tombstone, epoch));
  }

  /** Ends this life: what was built for it stops, and every cache of it goes (R14). */
  private endLife(): void {
    this.incarnation.end();
    this.incarnation = new Incarnation();
    this.secrets.forget();
    this.wirings.forget();
    this.freshnessStore = null;
  }

  /** Empties the object but for a tombstone and the epoch reached, once its life ended. */
  private async wipe(tombstone: number, epoch: number): Promise<void> {
    const name = this.name;
    const staticLife = name !== null && isStatic(this.env, name);
    const erased = { tombstone, epoch, staticLife };
    this.sqlite = await wipeStorage(this.ctx.storage, this.incarnation, erased);
  }

  /**
   * The watchdog's visit: books the poller's tick if it has none and sets the alarm again if
   * the platform lost it. Says what it found, and which config version this object runs.
   */
  async ensureScheduled(issued: IssuedConfig | null = null): Promise<VisitReply> {
    const version = this.store.meta.runtimeConfig()?.version ?? null;
    const incarnation = this.store.meta.incarnation();
    // A runtime poller's object that does not run what the registry issued writes nothing
    // here (an erased one stays erased): the watchdog pushes the config, if still issued.
    if (issued !== null && (incarnation !== issued.incarnation || version !== issued.version)) {
      return { ok: false, stale: true, errors: [], version, incarnation };
    }
    const name = this.seen();
    this.store.meta.markRegistered();
    const engine = await this.engine(name);
    if (!engine.ok) return { ok: false, stale: false, errors: engine.errors, version, incarnation };
    const result = await engine.engine.ensureScheduled();
    // A run going reports when it ends; a report now would say `running`, a change the run's
    // end takes back: two registry writes for nothing, at every visit that meets a run.
    if (!this.store.read().lease.held) await this.report(name);
    return { ok: true, ...result, version, incarnation };
  }

  /**
   * Reports to the registry what lists show of this poller, if it lists it (see
   * reportToRegistry); then writes what idle runs left in memory once the state row on disk
   * is IDLE_WRITE_EVERY_MS old, the report's memo in the same row.
   */
  private async report(name: string): Promise<void> {
    if (this.store.meta.registered()) {
      const wiring = await this.wiring(name);
      await reportToRegistry(this.env, name, this.store, wiring, this.freshness, Date.now());
    }
    this.store.writeIfDue(Date.now());
  }

  async moveCheckpoint(
    meant: number,
    request: { at: number; reason: string; force: boolean },
  ): Promise<CheckpointResult | OtherLife> {
    const name = this.writer(meant);
    if (typeof name !== 'string') return name;
    return moveCheckpoint(this.store, name, request, Date.now());
  }

  async storageStats(): Promise<StorageStats> {
    const writes = this.store.writeCounts();
    return {
      rowsWritten: writes.rows,
      alarmWrites: writes.alarms,
      ledgerRows: this.store.ledger.size(),
    };
  }

  async deadLetters(limit: number, cursor?: string): Promise<DeadLetterPage> {
    this.seen();
    return listDeadLetters(this.store, limit, cursor);
  }

  async replayDeadLetter(key: string): Promise<ReplayResult | Misconfigured> {
    // Seen first: the alarm recovers a replay that dies, and an id without a name needs it.
    const engine = await this.engine(this.seen());
    if (!engine.ok) return { outcome: 'misconfigured', errors: engine.errors };
    return replayDeadLetter(this.store, engine.context, () => engine.engine.rearm(), key);
  }

  async queueDeadLetter(
    meant: number,
    message: QueuedDeadLetter,
  ): Promise<{ outcome: 'kept' } | OtherLife> {
    const writer = this.writer(meant);
    if (typeof writer !== 'string') return writer;
    this.store.deadLetters.insert(queuedDeadLetter(message, Date.now()));
    return { outcome: 'kept' };
  }

  async discardDeadLetter(meant: number, key: string, reason: string): Promise<DiscardReply> {
    const writer = this.writer(meant);
    if (typeof writer !== 'string') return writer;
    return discardDeadLetter(this.store, key, reason, Date.now());
  }

  override async alarm(): Promise<void> {
    // No poller's (an id without a name, none stored), or erased: nothing to run.
    const name = this.name;
    if (name === null || this.store.meta.tombstoneOnly()) return;
    const engine = await this.engine(name);
    if (!engine.ok) {
      // Not retried: a config error needs a deploy, which brings a fresh trigger.
      console.log(JSON.stringify({ event: 'alarm_skipped', poller: name, errors: engine.errors }));
      return;
    }
    const life = this.incarnation;
    try {
      await engine.engine.onAlarm();
    } catch (error) {
      // The lease alarm stays set, so a run that threw is recovered at its expiry.
      const message = engine.redact(String(error));
      console.log(JSON.stringify({ event: 'run_crashed', poller: name, error: message }));
      await engine.engine.rearm();
    }
    // Erased during the run: nothing of it is this object's any more.
    if (life === this.incarnation) await this.report(name);
  }

  /** The poller's config, wired, with its own secrets decrypted for `${NAME}`. */
  private wiring(name: string): Promise<Wiring> {
    return this.wirings.of(name, this.store, this.incarnation);
  }

  async putSecret(
    meant: number,
    secret: string,
    value: string,
    origins: string[] | null = null,
  ): Promise<PutSecretReply> {
    const name = this.writer(meant);
    if (typeof name !== 'string') return name;
    // R18: bound to the origins given, or else to those the config sends it to now.
    const own = await this.secrets.values(name);
    const values = { ...(own.ok ? own.values : {}), [secret]: value };
    const runtime = this.store.meta.runtimeConfig()?.config;
    const bound = origins ?? reachOfOwn(name, this.env, runtime, values)?.get(secret) ?? [];
    const result = await this.secrets.put(name, secret, value, Date.now(), bound);
    if (result.outcome === 'set') {
      const detail = { name: secret, replaced: result.replaced, origins: result.origins };
      audit(this.store, name, 'secret.set', detail, Date.now());
      await (await this.engine(name)).engine?.ensureScheduled();
    }
    return result;
  }

  async listSecrets(): Promise<SealedSecretListing[]> {
    this.seen();
    return this.secrets.list();
  }

  async deleteSecret(meant: number, secret: string): Promise<{ deleted: boolean } | OtherLife> {
    const name = this.writer(meant);
    if (typeof name !== 'string') return name;
    const deleted = this.secrets.delete(secret);
    if (deleted) audit(this.store, name, 'secret.deleted', { name: secret }, Date.now());
    return { deleted };
  }

  private async engine(name: string): Promise<EngineOf> {
    const wiring = await this.wiring(name);
    return engineOf(wiring, this.store, this.freshness, this.ctx.storage, this.incarnation);
  }

  /**
   * A write meant for life `meant` of the poller: the name, as seen() gives it, or why the
   * write is refused here (see otherLife), with nothing written (R14).
   */
  private writer(meant: number): string | OtherLife {
    return otherLife(this.env, this.named(), this.store.meta, meant) ?? this.seen();
  }

  /** The poller's name (see `name`); an object without one serves no poller. */
  private named(): string {
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
  private seen(): string {
    const name = this.named();
    if (this.store.meta.tombstoneOnly()) return name;
    this.store.meta.rememberName(name);
    this.store.presence.seen(Date.now());
    return name;
  }
}
