import { envValues } from '../catalog.ts';
import { credentialsIn } from '../config/credential-forms.ts';
import { redact } from '../config/interpolate.ts';
import type { PollerEntry } from '../config/load.ts';
import { scheduleOf } from '../config/schedule.ts';
import type { SourceConfig } from '../config/schema.ts';
import { createDeliverer, type Sender } from '../delivery/index.ts';
import { deletionsContext } from '../engine/deletions-stream.ts';
import { IdleLog } from '../engine/idle-log.ts';
import type { PollerStore, RunContext } from '../engine/ports.ts';
import { ListingReconciler } from '../engine/reconcile.ts';
import { type SecretOrigins, secretKeysFrom } from '../secrets/index.ts';
import { type Authorizer, authorizerOf, type TokenVault } from '../sources/auth/index.ts';
import { tokenEndpointOf } from '../sources/auth/token-endpoint.ts';
import { childrenSource, deletionsSource, listingSource } from '../sources/derived-sources.ts';
import { displayUrl } from '../sources/display-url.ts';
import { fetchRecordById } from '../sources/fetch-record.ts';
import { type HttpFetch, HttpSource } from '../sources/http-source.ts';
import type { NextPathMemo } from '../sources/paging/index.ts';
import { boundPrecision } from '../sources/time.ts';
import { tombstoneRule } from '../sources/tombstone.ts';
import type { OwnSecrets, OwnSecretValues } from './own-secrets.ts';
import { reconnectStep, refreshSecretOf } from './refresh-secret.ts';
import { boundProblems, loadPollerConfig, reachOfOwn } from './secret-bounds.ts';
import type { SqliteStore } from './store/index.ts';
import { SqliteTokenVault } from './token-vault.ts';

export type Wiring = { ok: true; context: RunContext } | { ok: false; errors: string[] };

/** The poller's own secrets: their values, and the origins each may be sent to (R18). */
export interface PollerSecretSet {
  values: Record<string, string>;
  origins: SecretOrigins;
}

/**
 * Validates the poller's config and connects the engine to HTTP, delivery and storage. The
 * config is the static one from POLLERS, or else the runtime one its object keeps
 * (`runtime`). A static poller's `${NAME}` is the Worker's secret or var, else the poller's
 * own (which never shadows the Worker's); a runtime poller's is its own, else a Worker one
 * that FLEET_POLICY lists, and what it reaches is checked against the policy as it is now.
 * An own secret the config would send to an origin it was not set for wires nothing (R18).
 */
export function wirePoller(
  name: string,
  env: Env,
  store: PollerStore,
  runtime: unknown = undefined,
  pollerSecrets: PollerSecretSet = { values: {}, origins: {} },
  /** Which life of the object sends: checked before each request and delivery (R14). */
  sender: Sender = { incarnation: 0, check: () => {} },
  options: WireOptions = {},
): Wiring {
  const loaded = loadPollerConfig(name, env, runtime, pollerSecrets.values);
  if ('missing' in loaded) return { ok: false, errors: [loaded.missing] };
  const { entry } = loaded;
  if (!entry.ok) return { ok: false, errors: entry.errors };
  const unbound = boundProblems(
    name,
    { entry, declared: loaded.declared },
    env,
    pollerSecrets.values,
    pollerSecrets.origins,
  );
  if (unbound.length > 0) return { ok: false, errors: unbound };
  return wireLoaded(name, env, store, { entry, declared: loaded.declared }, sender, options);
}

/** What a preview changes in a poller's wiring (src/preview/); a run's wiring takes none. */
export interface WireOptions {
  /** Wraps every request the source and its token endpoint send (a preview records them). */
  tap?: (fetch: HttpFetch) => HttpFetch;
  /** Takes what the pages show of next.path, instead of the store's memo (which writes). */
  nextPaths?: NextPathMemo;
  /** Where oauth2 keeps its tokens, instead of the store's vault (an unsaved config's: memory). */
  vault?: () => TokenVault | null;
}

/**
 * Connects a config already loaded and checked (wirePoller, or a preview's unsaved config
 * read under FLEET_POLICY) to HTTP, delivery and `store`.
 */
export function wireLoaded(
  name: string,
  env: Env,
  store: PollerStore,
  loaded: { entry: Extract<PollerEntry, { ok: true }>; declared: boolean },
  sender: Sender = { incarnation: 0, check: () => {} },
  options: WireOptions = {},
): Wiring {
  const { entry } = loaded;
  const { config } = entry;
  const tap = options.tap ?? ((fetch: HttpFetch) => fetch);
  // Redacted wherever text is shown: the `${NAME}` values, and every credential the config
  // sends as written (an Authorization header, an api_key parameter) in each form it may
  // come back in.
  const secrets = [...entry.secrets, ...credentialsIn(config)];
  const log = (line: Record<string, unknown>) => console.log(JSON.stringify(line));
  const now = () => Date.now();
  let reach: HttpFetch = (request) => fetch(request);
  if (config.source.service !== undefined) {
    const binding = envValues(env)[config.source.service];
    if (!isFetcher(binding)) {
      return {
        ok: false,
        errors: [
          `poller "${name}": source.service: no service binding "${config.source.service}" in wrangler.toml`,
        ],
      };
    }
    reach = (request) => binding.fetch(request);
  }
  const sourceFetcher: HttpFetch = tap((request) => {
    sender.check();
    return reach(request);
  });
  const outside = tap((request) => {
    sender.check();
    return fetch(request);
  });
  const delivery = createDeliverer(
    name,
    config.deliver,
    env,
    (request) => fetch(request),
    secrets,
    now,
    sender,
  );
  if (!delivery.ok) return { ok: false, errors: [`poller "${name}": ${delivery.error}`] };
  // source.auth: one authorizer for every request to the source's origin (sources/auth/).
  let auth: Authorizer | undefined;
  if (config.source.auth !== undefined) {
    // A token endpoint on the source's own origin goes the source's way (its service
    // binding, if it has one); any other, out to the internet.
    const tokenFetcher: HttpFetch = (request) => {
      if (new URL(request.url).origin === new URL(config.source.url).origin) {
        return sourceFetcher(request);
      }
      return outside(request);
    };
    const built = authorizerOf(config.source.auth, {
      tokenEndpoint: tokenEndpointOf(tokenFetcher, {
        timeout: config.source.timeout,
        maxWait: config.max_rate_limit_wait,
        secrets: [],
        now,
      }),
      vault: options.vault ?? (() => tokenVaultOf(store, env, name)),
      now,
      secrets,
      origin: new URL(config.source.url).origin,
      reconnect: reconnectStep(name, refreshSecretOf(entry.raw, loaded.declared ? env : null)),
    });
    if (typeof built === 'string') return { ok: false, errors: [`poller "${name}": ${built}`] };
    auth = built;
  }
  // What each page shows of its next-page body path, kept by the store (a misspelt one is
  // warned of in status); none for a store without the memo (the engine's own tests).
  const nextPaths =
    options.nextPaths ?? (store as Partial<Pick<SqliteStore, 'nextPaths'>>).nextPaths;
  const shared = {
    maxRateLimitWait: config.max_rate_limit_wait,
    log,
    ...(auth ? { auth } : {}),
    ...(nextPaths ? { nextPaths } : {}),
  };
  // Each source shows its page URLs from its own url and params as written (`at` in the raw
  // config), so a secret shows as ${NAME} in its errors, however a URL would encode it.
  const sourceOf = (sourceConfig: SourceConfig, at: string[], missingIsEmpty = false) =>
    new HttpSource(sourceConfig, sourceFetcher, secrets, now, {
      ...shared,
      displayUrl: displayUrl(sourceConfig, entry.raw, entry.references, at),
      ...(missingIsEmpty ? { missingIsEmpty } : {}),
    });
  const context: RunContext = {
    poller: name,
    config,
    store,
    source: sourceOf(config.source, ['source']),
    deliverer: delivery.deliverer,
    now,
    random: Math.random,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    precision: boundPrecision(config.source.time_format, config.source.time_zone),
    schedule: scheduleOf(name, config),
    // Tokens an authorizer learned at run time are secrets too.
    redact: (text) => redact(text, auth ? [...secrets, ...auth.learned()] : secrets),
    isDeleted: tombstoneRule(config.source),
    log,
    idleLog: new IdleLog(config.log_idle_every),
  };
  // The endpoints beside the main stream: deletes (source.deletions), the listing (reconcile).
  const deletions = deletionsSource(config.source);
  if (deletions !== null)
    context.deletions = deletionsContext(
      context,
      sourceOf(deletions, ['source', 'deletions']),
      deletions,
    );
  // source.children: each parent's children, a 404 meaning the parent went away meanwhile.
  const children = childrenSource(config.source);
  if (children !== null)
    context.children = { source: sourceOf(children, ['source', 'children'], true) };
  const listing = listingSource(config);
  if (listing !== null) {
    const template = config.reconcile?.fetch;
    const byId =
      template === undefined
        ? null
        : fetchRecordById(template, config.source, sourceFetcher, secrets, auth);
    context.reconcile = new ListingReconciler(sourceOf(listing, ['reconcile']), byId);
  }
  // source.resume.resync_deletes: full rounds list; the reconciliation's turn delivers their deletes.
  if (config.source.resume?.resync_deletes && listing === null) {
    context.reconcile = new ListingReconciler(null, null);
  }
  return { ok: true, context };
}

/** The poller's OAuth 2.0 token storage, sealed under SECRETS_KEY; null without one. */
function tokenVaultOf(store: PollerStore, env: Env, poller: string): TokenVault | null {
  const table = (store as Partial<Pick<SqliteStore, 'oauth'>>).oauth;
  const keys = secretKeysFrom(env);
  if (table === undefined || !keys.ok) return null;
  return new SqliteTokenVault(table, keys.keys, poller);
}

function isFetcher(value: unknown): value is { fetch: (request: Request) => Promise<Response> } {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { fetch?: unknown }).fetch === 'function'
  );
}

/**
 * The poller's config, wired with its own secrets decrypted for `${NAME}`, and kept: a tick
 * asks for it twice (the run, then the registry's report), and validating the config is most
 * of a quiet tick's CPU. Built again when the name, the runtime config or the poller's
 * secrets change; the Worker's own vars and secrets cannot change under a running instance
 * (a deploy starts new ones).
 */
export class WiringCache {
  private last: {
    name: string;
    config: string | null;
    secrets: Record<string, string>;
    wiring: Wiring;
  } | null = null;

  constructor(
    private readonly env: Env,
    private readonly secrets: OwnSecrets,
  ) {}

  /** The wiring for `name` over `store`, whose sends `life` checks (R14). */
  async of(
    name: string,
    store: SqliteStore,
    life: { readonly check: () => void },
  ): Promise<Wiring> {
    const own = await this.bindUnbound(name, store);
    if (!own.ok) return { ok: false, errors: [`poller "${name}": ${own.error}`] };
    const runtime = store.meta.runtimeConfig();
    const config = runtime?.text ?? null;
    const last = this.last;
    if (last?.name === name && last.config === config && last.secrets === own.values) {
      return last.wiring;
    }
    const wiring = wirePoller(name, this.env, store, runtime?.config, own, {
      incarnation: runtime === null ? 0 : (store.meta.incarnation() ?? 0),
      check: life.check,
    });
    this.last = { name, config, secrets: own.values, wiring };
    return wiring;
  }

  /**
   * The poller's own secrets, each set before secrets were bound (migration 20) bound first to
   * where the config stored now sends it (none, if it does not name it): once, and before any
   * other config can be stored, so from then on it goes nowhere else. A config that does not
   * load binds nothing yet.
   */
  async bindUnbound(name: string, store: SqliteStore): Promise<OwnSecretValues> {
    const own = await this.secrets.values(name);
    if (!own.ok) return own;
    const unbound = Object.keys(own.origins).filter((secret) => own.origins[secret] === null);
    if (unbound.length === 0) return own;
    const reach = reachOfOwn(name, this.env, store.meta.runtimeConfig()?.config, own.values);
    if (reach === null) return own;
    this.secrets.bindUnbound(new Map(unbound.map((secret) => [secret, reach.get(secret) ?? []])));
    return this.secrets.values(name);
  }

  /** Drops the kept wiring (the object was erased). */
  forget(): void {
    this.last = null;
  }
}
