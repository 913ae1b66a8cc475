import { DurableObject } from 'cloudflare:workers';
import type { RunNowKind } from '../engine/ports.ts';
import { audit, type CheckpointRequest, type CheckpointResult, checkpointAdmin } from './admin.ts';
import {
  discardDeadLetter,
  listDeadLetters,
  queuedDeadLetter,
  type ReplayResult,
  replayDeadLetter,
} from './dead-letters.ts';
import { type EngineOf, engineOf } from './engine-port.ts';
import { isNudgeToken } from './nudge-auth.ts';
import { ObjectLife } from './object-life.ts';
import { previewPoller } from './preview.ts';
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
  PreviewAsk,
  PreviewReply,
  PutSecretReply,
  QueuedDeadLetter,
  ReconcileReply,
  RetryingUpdate,
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
import type { SqliteStore } from './store/index.ts';

/**
 * One poller: owns its lease, checkpoint, ledger and history in SQLite, and runs the
 * engine. Everything it knows is in storage; the alarm is derived from it. It is reached by
 * `idFromName(poller)`, and knows its name from its id (see ObjectLife.name).
 */
export class Poller extends DurableObject<Env> implements PollerRpc {
  /** Who the object is and which life of it runs (R14): an erase replaces what it holds. */
  private readonly life: ObjectLife;

  /** The store of this life, asked for at every use: an erase replaces it. */
  private get store(): SqliteStore {
    return this.life.store;
  }

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.life = new ObjectLife(ctx, env);
  }

  async trigger(kind: 'cron' | 'manual'): Promise<TriggerReply> {
    const engine = await this.engine(this.seen());
    if (!engine.ok) return { outcome: 'misconfigured', errors: engine.errors };
    return engine.engine.trigger(kind);
  }

  async status(): Promise<PollerStatus> {
    const name = this.seen();
    const wiring = await this.life.wiring(name);
    const alarm = await this.ctx.storage.getAlarm();
    return statusOf(name, wiring, this.store, this.life.freshness, this.life.secrets, alarm);
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
      const own = await this.life.secrets.values(this.life.named());
      if (!own.ok || !(await isNudgeToken(own.values, token))) return { outcome: 'unauthorized' };
    }
    const engine = await this.engine(this.seen());
    if (!engine.ok) return { outcome: 'ignored', reason: 'misconfigured' };
    return engine.engine.nudge();
  }

  /** POST /pollers/:name/preview: see previewPoller (src/poller/preview.ts). */
  async preview(ask: PreviewAsk): Promise<PreviewReply> {
    const name = this.life.named();
    // Not seen(): a preview leaves nothing behind, not even the poller's first sighting.
    if (this.store.meta.tombstoneOnly()) {
      return { outcome: 'refused', status: 404, error: `no poller "${name}"` };
    }
    const engine = await this.engine(name);
    if (!engine.ok) return { outcome: 'misconfigured', errors: engine.errors };
    const own = await this.life.secrets.values(name);
    if (!own.ok) return { outcome: 'misconfigured', errors: [`poller "${name}": ${own.error}`] };
    const runtime = this.store.meta.runtimeConfig();
    const incarnation = runtime === null ? 0 : (this.store.meta.incarnation() ?? 0);
    const life = this.life.incarnation;
    return previewPoller(
      {
        name,
        env: this.env,
        store: this.store,
        runtime: runtime?.config,
        own,
        sender: { incarnation, check: () => life.check() },
        engine: engine.engine,
      },
      ask,
    );
  }

  async runs(limit: number): Promise<StoredRun[]> {
    return this.store.history.runs(limit);
  }

  async run(id: number): Promise<StoredRun | null> {
    return this.store.history.run(id);
  }

  async runNow(kind: RunNowKind = 'manual'): Promise<RunNowReply> {
    const name = this.seen();
    const engine = await this.engine(name);
    if (!engine.ok) return { outcome: 'misconfigured', errors: engine.errors };
    const started = this.life.incarnation;
    const reply = await engine.engine.runNow(kind);
    const erased = started !== this.life.incarnation; // then nothing of it is kept, history included
    if (!erased) {
      const outcome = reply.outcome === 'ran' ? reply.run.outcome : reply.outcome;
      // npm start's first run is not an operator's action: it stays out of the audit log.
      if (kind === 'manual') audit(this.store, name, 'run.manual', { outcome }, Date.now());
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
    // R14: an incarnation erased here, or older than the one running, is refused.
    const entered = await this.life.enter(incarnation);
    if (entered === 'refused') {
      return {
        ok: false,
        refused: 'erased',
        errors: [`poller "${this.life.named()}": deleted meanwhile`],
      };
    }
    const name = this.seen();
    const stored = this.store.meta.runtimeConfig();
    if (stored !== null && entered === 'same' && stored.version > version)
      return { ok: true, version: stored.version };
    // Secrets set before they were bound are bound under the config they were set for (R18).
    if (stored !== null) await this.life.bindUnbound(name);
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
   * tombstone of `incarnation`; this life ends before any await (see ObjectLife.erase, R14).
   */
  async erase(incarnation = 0): Promise<void> {
    await this.life.erase(incarnation);
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
      const wiring = await this.life.wiring(name);
      await reportToRegistry(this.env, name, this.store, wiring, this.life.freshness, Date.now());
    }
    this.store.writeIfDue(Date.now());
  }

  async moveCheckpoint(
    meant: number,
    request: CheckpointRequest,
  ): Promise<CheckpointResult | OtherLife> {
    const name = this.writer(meant);
    if (typeof name !== 'string') return name;
    const wiring = await this.life.wiring(name);
    const config = wiring.ok ? wiring.context.config : null;
    return checkpointAdmin(this.store, name, config, request, Date.now());
  }

  async storageStats(): Promise<StorageStats> {
    const writes = this.store.writeCounts();
    return {
      rowsWritten: writes.rows,
      alarmWrites: writes.alarms,
      ledgerRows: this.store.ledger.size(),
    };
  }

  async retryingUpdates(): Promise<RetryingUpdate[]> {
    // At most MAX_RETRYING per stream (engine/retrying.ts): small enough for one answer.
    return this.store.retryingVersions().map(({ key, id, versionMs, attempts }) => ({
      key,
      id,
      version_ms: versionMs,
      attempts,
    }));
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
    const name = this.life.name;
    if (name === null || this.store.meta.tombstoneOnly()) return;
    const engine = await this.engine(name);
    if (!engine.ok) {
      // Not retried: a config error needs a deploy, which brings a fresh trigger.
      console.log(JSON.stringify({ event: 'alarm_skipped', poller: name, errors: engine.errors }));
      return;
    }
    const started = this.life.incarnation;
    try {
      await engine.engine.onAlarm();
    } catch (error) {
      // The lease alarm stays set, so a run that threw is recovered at its expiry.
      const message = engine.redact(String(error));
      console.log(JSON.stringify({ event: 'run_crashed', poller: name, error: message }));
      await engine.engine.rearm();
    }
    // Erased during the run: nothing of it is this object's any more.
    if (started === this.life.incarnation) await this.report(name);
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
    const own = await this.life.secrets.values(name);
    const values = { ...(own.ok ? own.values : {}), [secret]: value };
    const runtime = this.store.meta.runtimeConfig()?.config;
    const bound = origins ?? reachOfOwn(name, this.env, runtime, values)?.get(secret) ?? [];
    const result = await this.life.secrets.put(name, secret, value, Date.now(), bound);
    if (result.outcome === 'set') {
      const detail = { name: secret, replaced: result.replaced, origins: result.origins };
      audit(this.store, name, 'secret.set', detail, Date.now());
      await (await this.engine(name)).engine?.ensureScheduled();
    }
    return result;
  }

  async listSecrets(): Promise<SealedSecretListing[]> {
    this.seen();
    return this.life.secrets.list();
  }

  async deleteSecret(meant: number, secret: string): Promise<{ deleted: boolean } | OtherLife> {
    const name = this.writer(meant);
    if (typeof name !== 'string') return name;
    const deleted = this.life.secrets.delete(secret);
    if (deleted) audit(this.store, name, 'secret.deleted', { name: secret }, Date.now());
    return { deleted };
  }

  private async engine(name: string): Promise<EngineOf> {
    const wiring = await this.life.wiring(name);
    return engineOf(
      wiring,
      this.store,
      this.life.freshness,
      this.ctx.storage,
      this.life.incarnation,
    );
  }

  /** A call for the poller (see ObjectLife.seen): returns its name. */
  private seen(): string {
    return this.life.seen();
  }

  /** A write meant for life `meant`: the name, or why it is refused (see ObjectLife.writer). */
  private writer(meant: number): string | OtherLife {
    return this.life.writer(meant);
  }
}
