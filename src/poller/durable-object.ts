import { DurableObject } from 'cloudflare:workers';
import { settableAlarmTime } from '../engine/iso-time.ts';
import type { NudgeReply } from '../engine/nudge.ts';
import { PollerEngine, type TriggerResult } from '../engine/poller.ts';
import type { RunContext, RunRecord } from '../engine/ports.ts';
import { registryOf } from '../registry/registry.ts';
import { REPORT_EVERY_MS } from '../registry/reported-lag.ts';
import {
  configuredKeys,
  countKeyRoles,
  isSecretsError,
  type KeyRoleCounts,
  PollerSecrets,
  secretKeysFrom,
} from '../secrets/index.ts';
import { parseTimestamp } from '../sources/time.ts';
import { audit, moveCheckpoint } from './admin.ts';
import {
  discardDeadLetter,
  listDeadLetters,
  type ReplayResult,
  replayDeadLetter,
} from './dead-letters.ts';
import { SqliteFreshness } from './freshness-store.ts';
import { Incarnation } from './incarnation.ts';
import { migrate } from './migrations.ts';
import { isNudgeToken } from './nudge-auth.ts';
import { SqliteStore } from './sqlite-store.ts';
import { assessHealth, buildStatus, faultReason, type PollerStatus } from './status.ts';
import { type Wiring, wirePoller } from './wiring.ts';

/** One object for "no secrets of its own", so the wiring cache can tell it from a change. */
const NO_SECRETS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export type TriggerReply = TriggerResult | { outcome: 'misconfigured'; errors: string[] };

/** What a config push did: applied (its version), refused for an erased incarnation, or invalid. */
export type ConfigureReply =
  | { ok: true; version: number }
  | { ok: false; refused?: 'erased'; errors: string[] };

/** What the watchdog's visit found; `stale` when the object does not run the issued config. */
export type VisitReply =
  | {
      ok: true;
      repaired: boolean;
      nextTickAt: number | null;
      version: number | null;
      incarnation: number | null;
    }
  | {
      ok: false;
      stale: boolean;
      errors: string[];
      version: number | null;
      incarnation: number | null;
    };

/**
 * One poller: owns its lease, checkpoint, ledger and history in SQLite, and runs the
 * engine. Everything it knows is in storage; the alarm is derived from it.
 */
export class Poller extends DurableObject<Env> {
  /** This life of the object (R14): erase() ends it, and what was built for it stops. */
  private incarnation = new Incarnation();
  private sqlite: SqliteStore;
  private freshnessStore: SqliteFreshness | null = null;
  /** The poller's own secrets, decrypted: kept for this instance's life, dropped on a change. */
  private decrypted: Record<string, string> | null = null;
  /**
   * The last wiring and what it was built from: a tick asks for it twice (the run, then the
   * registry's report), and validating the config is most of a quiet tick's CPU. Built again
   * when the name, the runtime config or the poller's secrets change; the Worker's own vars
   * and secrets cannot change under a running instance (a deploy starts new ones).
   */
  private wired: {
    name: string;
    config: string | null;
    secrets: Record<string, string>;
    wiring: Wiring;
  } | null = null;

  private get store(): SqliteStore {
    return this.sqlite;
  }

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage);
    this.sqlite = new SqliteStore(ctx.storage, this.incarnation);
  }

  /** A cron or manual trigger: takes the lease (or is skipped) and returns at once. */
  async trigger(name: string, kind: 'cron' | 'manual'): Promise<TriggerReply> {
    this.rememberName(name);
    const engine = await this.engine(name);
    if (!engine.ok) return { outcome: 'misconfigured', errors: engine.errors };
    return engine.engine.trigger(kind);
  }

  async status(name: string): Promise<PollerStatus> {
    this.rememberName(name);
    const wiring = await this.wiring(name);
    return buildStatus({
      name,
      configErrors: wiring.ok ? [] : wiring.errors,
      config: wiring.ok ? wiring.context.config : undefined,
      state: this.store.read(),
      lastRun: this.store.runs(1)[0],
      alarm: await this.ctx.storage.getAlarm(),
      counters: this.store.counters(),
      deadLetters: this.store.deadLetterSummary(),
      audit: this.store.auditLog(20),
      firstSeenAt: this.store.firstSeenAt(),
      tables: this.store.tableSizes(),
      databaseBytes: this.store.databaseBytes(),
      now: Date.now(),
      freshness: { lateness: this.freshness.lateness(Date.now()), nudges: this.freshness.nudges() },
      // After the wiring above, whose read of the secrets moves them during a rotation.
      secretKeys: await this.secretKeyCounts(),
    });
  }

  /** How many of the poller's own secrets each of the Worker's keys seals (rotations). */
  private async secretKeyCounts(): Promise<KeyRoleCounts> {
    const sealed = new PollerSecrets(this.ctx.storage.sql).listSealed();
    return countKeyRoles(
      sealed.map((secret) => secret.key_id),
      await configuredKeys(this.env),
    );
  }

  /**
   * A nudge (POST /pollers/:name/nudge): "something changed upstream, poll soon". `token` is
   * the nudge token the caller presented, checked here against the poller's NUDGE_TOKEN
   * secret; null when the route has already checked ADMIN_TOKEN.
   */
  async nudge(
    name: string,
    token: string | null,
  ): Promise<
    NudgeReply | { outcome: 'unauthorized' } | { outcome: 'ignored'; reason: 'misconfigured' }
  > {
    if (token !== null) {
      const own = await this.ownSecrets(name);
      if (!own.ok || !(await isNudgeToken(own.values, token))) return { outcome: 'unauthorized' };
    }
    this.rememberName(name);
    const engine = await this.engine(name);
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

  /** The run history, newest first. */
  async runs(limit: number): Promise<RunRecord[]> {
    return this.store.runs(limit);
  }

  /** Runs now and answers with the run's outcome, or says why it was skipped (admin). */
  async runNow(name: string) {
    this.rememberName(name);
    const engine = await this.engine(name);
    if (!engine.ok) return { outcome: 'misconfigured' as const, errors: engine.errors };
    const life = this.incarnation;
    const reply = await engine.engine.runNow();
    if (life !== this.incarnation) return reply; // erased meanwhile: nothing of it is kept
    audit(
      this.store,
      name,
      'run.manual',
      { outcome: reply.outcome === 'ran' ? reply.run.outcome : reply.outcome },
      Date.now(),
    );
    await this.reportToRegistry(name);
    return reply;
  }

  /** Pauses (every trigger skipped) or resumes the poller (admin). */
  async setPaused(name: string, paused: boolean, reason: string | null) {
    this.rememberName(name);
    this.store.setPaused(paused);
    audit(this.store, name, paused ? 'poller.paused' : 'poller.resumed', { reason }, Date.now());
    const engine = await this.engine(name);
    // Resumed, a self-scheduled poller books its next tick again (the ones it missed are not
    // made up: the next window covers them).
    if (engine.ok) await engine.engine.ensureScheduled();
    else if (paused) await this.idleUnlessLeased();
    await this.reportToRegistry(name);
    return { paused };
  }

  /**
   * A runtime poller's config (as written, `${NAME}` unresolved), from the registry: kept
   * here so that the poller runs without asking the registry, and scheduled from it. A new
   * version replaces the old; the checkpoint, ledger and dead letters stay.
   */
  async configure(
    name: string,
    config: string,
    version: number,
    incarnation: number,
  ): Promise<ConfigureReply> {
    // R14: a push for an incarnation erased here (a DELETE answered before it arrived) or
    // older than the one running is refused: no earlier life of the name comes back.
    const running = this.store.incarnation();
    if (incarnation <= this.store.erasedIncarnation() || incarnation < (running ?? 0)) {
      return { ok: false, refused: 'erased', errors: [`poller "${name}": deleted meanwhile`] };
    }
    // A newer incarnation than the one here: the registry forgot the older one, so must this
    // object (only a crash between the registry's steps could bring this about).
    if (running !== null && incarnation > running) await this.erase(running);
    // Before the name: an erased object takes a name only with a new incarnation.
    if (running !== incarnation) this.store.setIncarnation(incarnation);
    this.rememberName(name);
    const stored = this.store.runtimeConfig();
    if (stored !== null && running === incarnation && stored.version > version)
      return { ok: true, version: stored.version };
    this.store.setRuntimeConfig(config, version);
    this.store.markRegistered();
    this.store.setNextTick(null); // the schedule may have changed: booked again below
    audit(
      this.store,
      name,
      stored === null ? 'config.created' : 'config.replaced',
      { version },
      Date.now(),
    );
    const engine = await this.engine(name);
    if (engine.ok) await engine.engine.ensureScheduled();
    else await this.idleUnlessLeased();
    await this.reportToRegistry(name);
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
   * tombstone: `incarnation` (the registry's, for a runtime poller) is refused from now on.
   * Ends this life first, before any await: a run still going sends nothing more and
   * commits nothing (R14); every cache of the object goes with it (secrets, wiring,
   * freshness, nudge auth). No other call is let in until the object is fresh again.
   */
  async erase(incarnation = 0): Promise<void> {
    const ended = this.incarnation;
    ended.end();
    const epoch = this.store.read().lease.epoch;
    const tombstone = Math.max(
      incarnation,
      this.store.incarnation() ?? 0,
      this.store.erasedIncarnation(),
    );
    this.incarnation = new Incarnation();
    this.decrypted = null;
    this.wired = null;
    this.freshnessStore = null;
    await this.ctx.blockConcurrencyWhile(async () => {
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      migrate(this.ctx.storage);
      this.sqlite = new SqliteStore(this.ctx.storage, this.incarnation);
      this.sqlite.markErased(tombstone, epoch);
    });
  }

  /**
   * The watchdog's visit: books the poller's tick if it has none and sets the alarm again if
   * the platform lost it. Says what it found, and which config version this object runs.
   */
  async ensureScheduled(
    name: string,
    issued: { version: number; incarnation: number } | null = null,
  ): Promise<VisitReply> {
    const version = this.store.runtimeConfig()?.version ?? null;
    const incarnation = this.store.incarnation();
    // A runtime poller's object that does not run what the registry issued writes nothing
    // here (an erased one stays erased): the watchdog pushes the config, if still issued.
    if (issued !== null && (incarnation !== issued.incarnation || version !== issued.version)) {
      return { ok: false, stale: true, errors: [], version, incarnation };
    }
    this.rememberName(name);
    this.store.markRegistered();
    const engine = await this.engine(name);
    if (!engine.ok) return { ok: false, stale: false, errors: engine.errors, version, incarnation };
    const result = await engine.engine.ensureScheduled();
    await this.reportToRegistry(name);
    return { ok: true, ...result, version, incarnation };
  }

  /**
   * Tells the registry what lists show of this poller, when it changed (its state or dead
   * letters), or its checkpoint moved and REPORT_EVERY has passed: a few writes a day for a
   * steady poller, whatever its schedule.
   */
  private async reportToRegistry(name: string): Promise<void> {
    if (!this.store.registered()) return;
    const now = Date.now();
    const wiring = await this.wiring(name);
    const state = this.store.read();
    const deadLetters = this.store.deadLetterSummary();
    const health = assessHealth({
      name,
      configErrors: wiring.ok ? [] : wiring.errors,
      config: wiring.ok ? wiring.context.config : undefined,
      state,
      lastRun: this.store.runs(1)[0],
      deadLetters,
      firstSeenAt: this.store.firstSeenAt(),
      now,
      freshness: { lateness: this.freshness.lateness(now), nudges: this.freshness.nudges() },
    });
    const summary = {
      state: health.state,
      checkpoint: state.checkpoint,
      deadLetters: deadLetters.count,
      atFault: health.alerts.length > 0,
      // Sent with the rest, not a reason to report: an alert's text changes with every tick.
      reason: faultReason(health.alerts),
    };
    const last = this.store.lastReport();
    const changed =
      last === null ||
      last.state !== summary.state ||
      last.deadLetters !== summary.deadLetters ||
      last.atFault !== summary.atFault ||
      (last.checkpoint !== summary.checkpoint && now - last.at >= REPORT_EVERY_MS);
    if (!changed) return;
    try {
      await registryOf(this.env).report(name, summary, now);
      this.store.setLastReport({ ...summary, at: now });
    } catch (error) {
      // The next run reports again: a list a few minutes stale is better than a failed run.
      console.log(
        JSON.stringify({ event: 'registry_report_failed', poller: name, error: String(error) }),
      );
    }
  }

  /** Moves the checkpoint by hand (admin): a backfill, or with force a skip forward. */
  async moveCheckpoint(name: string, request: { at: number; reason: string; force: boolean }) {
    this.rememberName(name);
    return moveCheckpoint(this.store, name, request, Date.now());
  }

  /** What this object has written to storage since it started, for cost checks. */
  async storageStats(): Promise<{ rowsWritten: number; alarmWrites: number; ledgerRows: number }> {
    const writes = this.store.writeCounts();
    return {
      rowsWritten: writes.rows,
      alarmWrites: writes.alarms,
      ledgerRows: this.store.ledgerSize(),
    };
  }

  /** Dead letters, oldest first, a page at a time. */
  async deadLetters(name: string, limit: number, cursor?: string) {
    this.rememberName(name);
    return listDeadLetters(this.store, limit, cursor);
  }

  /** Delivers a dead letter again now, holding the lease meanwhile; success removes it. */
  async replayDeadLetter(
    name: string,
    key: string,
  ): Promise<ReplayResult | { outcome: 'misconfigured'; errors: string[] }> {
    this.rememberName(name); // the alarm recovers a replay that dies, and needs the name
    const engine = await this.engine(name);
    if (!engine.ok) return { outcome: 'misconfigured', errors: engine.errors };
    return replayDeadLetter(this.store, engine.context, () => engine.engine.rearm(), key);
  }

  /** Keeps a message the queue consumer gave up on as one of this poller's dead letters. */
  async queueDeadLetter(
    name: string,
    message: {
      key: string;
      id: string;
      version: string;
      record: string;
      attempts: number;
      at: number;
    },
  ) {
    this.rememberName(name);
    this.store.addDeadLetter({
      key: message.key,
      kind: 'delivery',
      id: message.id,
      version: message.version,
      versionMs: parseTimestamp(message.version) ?? null,
      record: JSON.parse(message.record) as unknown,
      error: `the queue consumer gave up after ${message.attempts} attempt(s) (dead-letter queue)`,
      attempts: message.attempts,
      firstFailure: message.at,
      lastFailure: Date.now(),
    });
  }

  /** Discards a dead letter; the reason stays in the audit log. */
  async discardDeadLetter(name: string, key: string, reason: string) {
    this.rememberName(name);
    return discardDeadLetter(this.store, key, reason, Date.now());
  }

  override async alarm(): Promise<void> {
    const name = this.storedName();
    if (name === null) return;
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
    if (life === this.incarnation) await this.reportToRegistry(name);
  }

  /** The poller's config, wired, with its own secrets decrypted for `${NAME}`. */
  private async wiring(name: string): Promise<Wiring> {
    const own = await this.ownSecrets(name);
    if (!own.ok) return { ok: false, errors: [`poller "${name}": ${own.error}`] };
    const runtime = this.store.runtimeConfig();
    const config = runtime?.text ?? null;
    const last = this.wired;
    if (last?.name === name && last.config === config && last.secrets === own.values) {
      return last.wiring;
    }
    const wiring = wirePoller(name, this.env, this.store, runtime?.config, own.values, {
      incarnation: runtime === null ? 0 : (this.store.incarnation() ?? 0),
      check: this.incarnation.check,
    });
    this.wired = { name, config, secrets: own.values, wiring };
    return wiring;
  }

  /**
   * The poller's own secrets, decrypted once per instance (and again after a change). During
   * a SECRETS_KEY rotation they are moved to the new key here, on first use.
   */
  private async ownSecrets(
    name: string,
  ): Promise<{ ok: true; values: Record<string, string> } | { ok: false; error: string }> {
    if (this.decrypted !== null) return { ok: true, values: this.decrypted };
    const secrets = new PollerSecrets(this.ctx.storage.sql);
    if (secrets.list().length === 0) return { ok: true, values: NO_SECRETS };
    const keys = secretKeysFrom(this.env);
    if (!keys.ok) return { ok: false, error: keys.error.message };
    try {
      if (keys.keys.previous) await secrets.reencrypt(keys.keys, name);
      this.decrypted = await secrets.decryptAll(keys.keys, name);
      return { ok: true, values: this.decrypted };
    } catch (error) {
      return {
        ok: false,
        error: isSecretsError(error) ? error.message : 'its secrets could not be read',
      };
    }
  }

  /** Sets one of the poller's own secrets (write-only: the value never comes back). */
  async putSecret(name: string, secret: string, value: string) {
    this.rememberName(name);
    const keys = secretKeysFrom(this.env);
    if (!keys.ok)
      return { outcome: 'refused' as const, status: 503 as const, error: keys.error.message };
    const result = await new PollerSecrets(this.ctx.storage.sql).put(
      keys.keys,
      name,
      secret,
      value,
      Date.now(),
    );
    if (result.outcome === 'set') {
      this.decrypted = null;
      audit(
        this.store,
        name,
        'secret.set',
        { name: secret, replaced: result.replaced },
        Date.now(),
      );
      await (await this.engine(name)).engine?.ensureScheduled();
    }
    return result;
  }

  /**
   * The names of the poller's own secrets, when each was set and the fingerprint of the key
   * it is sealed under (a rotation's progress); never a value.
   */
  async listSecrets(name: string) {
    this.rememberName(name);
    return new PollerSecrets(this.ctx.storage.sql).listSealed();
  }

  async deleteSecret(name: string, secret: string) {
    this.rememberName(name);
    const deleted = new PollerSecrets(this.ctx.storage.sql).delete(secret);
    if (deleted) {
      this.decrypted = null;
      audit(this.store, name, 'secret.deleted', { name: secret }, Date.now());
    }
    return { deleted };
  }

  private async engine(
    name: string,
  ): Promise<
    | { ok: true; engine: PollerEngine; context: RunContext; redact: (text: string) => string }
    | { ok: false; errors: string[]; engine?: undefined }
  > {
    const wiring = await this.wiring(name);
    if (!wiring.ok) return wiring;
    this.store.deadLetterRetention = wiring.context.config.dead_letter_retention;
    const storage = this.ctx.storage;
    const life = this.incarnation;
    const alarm = {
      set: async (at: number | null) => {
        if (!life.live) return; // the alarm is the next incarnation's
        // Each set or delete is billed as a row written: one that changes nothing is skipped.
        const wanted = at === null ? null : settableAlarmTime(at);
        if ((await storage.getAlarm()) === wanted) return;
        if (wanted === null) await storage.deleteAlarm();
        else await storage.setAlarm(wanted);
        this.store.countAlarmWrite();
      },
      get: () => storage.getAlarm(),
    };
    const redact = wiring.context.redact ?? ((text: string) => text);
    const context: RunContext = { ...wiring.context, freshness: this.freshness };
    const engine = new PollerEngine(context, alarm);
    return { ok: true, engine, context, redact };
  }

  /**
   * The alarm does not say whose it is, so the first call stores the poller's name; and when
   * it came, so that a poller that never runs is noticed (status `silent`).
   */
  private rememberName(name: string): void {
    // An erased object is no poller until the registry configures a new incarnation: a call
    // that reaches it meanwhile leaves nothing behind.
    if (this.store.erasedIncarnation() > 0 && this.store.incarnation() === null) return;
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('name', ?)", name);
    this.store.seen(Date.now());
  }

  private storedName(): string | null {
    const rows = this.ctx.storage.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = 'name'")
      .toArray();
    return rows[0]?.value ?? null;
  }
}
