import { readFleetPolicy } from './config/fleet-policy.ts';
import { referencedNames } from './config/interpolate.ts';
import {
  type LoadedPollers,
  loadPoller,
  loadPollers,
  type PollerEntry,
  readPollersTable,
} from './config/load.ts';
import { checkRuntimePut } from './config/runtime-poller.ts';
import type { PollerConfig } from './config/schema.ts';
import { envValues } from './env-values.ts';
import { registryOf } from './registry/registry.ts';

/**
 * The one place that knows which pollers exist and where their config comes from:
 * - static pollers: `[vars.POLLERS.<name>]` in wrangler.toml (env.POLLERS), per deploy;
 * - runtime pollers: created with `PUT /pollers/:name`, listed in the registry, their config
 *   (as written, `${NAME}` unresolved) kept in their own Durable Object.
 * A static poller's name cannot be taken by a runtime one.
 */

/** A poller and its config as written: declared in POLLERS, or issued by the registry. */
export type CatalogEntry =
  | { kind: 'static'; name: string; raw: unknown }
  | {
      kind: 'runtime';
      name: string;
      raw: unknown;
      /** The config as the registry keeps it (JSON text). */
      text: string;
      version: number;
      /** Which life of the name (R14): never the same for a name deleted and created again. */
      incarnation: number;
    };

/** The Worker's bindings and secrets, as the config's `${NAME}` interpolation reads them. */
export { envValues };

/** Every static poller of this deploy, valid or not. */
export function staticPollers(env: Env): LoadedPollers {
  return loadPollers(envValues(env));
}

/** A static poller's config as written, or undefined when `name` is not one. */
export function staticConfig(env: Env, name: string): unknown {
  const table = readPollersTable(env.POLLERS);
  return table.ok ? table.pollers[name] : undefined;
}

export function isStatic(env: Env, name: string): boolean {
  return staticConfig(env, name) !== undefined;
}

/** The life of a static poller, where a runtime poller's is its incarnation (never 0). */
export const STATIC_INCARNATION = 0;

/**
 * Which life of the poller `name` is now (R14): STATIC_INCARNATION for a poller declared in
 * POLLERS, a runtime poller's incarnation as the registry lists it, or null when there is no
 * such poller. An admin write carries it to the poller's object, which refuses it once that
 * life has ended. The config is not read.
 */
export async function pollerLife(env: Env, name: string): Promise<number | null> {
  if (isStatic(env, name)) return STATIC_INCARNATION;
  return registryOf(env).incarnationOf(name);
}

/** True when `name` is a poller: declared in POLLERS, or a runtime poller in the registry. */
export async function pollerExists(env: Env, name: string): Promise<boolean> {
  return (await pollerLife(env, name)) !== null;
}

/** A poller, static or runtime, with its config as written; null when there is none. */
export async function findPoller(env: Env, name: string): Promise<CatalogEntry | null> {
  const declared = staticConfig(env, name);
  if (declared !== undefined) return { kind: 'static', name, raw: declared };
  const issued = await registryOf(env).issued(name);
  if (issued === null) return null;
  return {
    kind: 'runtime',
    name,
    raw: JSON.parse(issued.config) as unknown,
    ...issued,
    text: issued.config,
  };
}

export type PollerSettings =
  | {
      ok: true;
      entry: CatalogEntry;
      config: PollerConfig;
      /** The Worker's secret values the config used: redact them wherever text is shown. */
      secrets: string[];
    }
  | { ok: false; entry: CatalogEntry | null; error: string };

/**
 * A poller's config, validated as its wiring would (a runtime one under FLEET_POLICY), for
 * code that reads its settings and calls nothing with them: the queue consumer reads
 * `deliver`, the dashboard the schedule. A `${NAME}` it cannot resolve here (a per-poller
 * secret, kept sealed in the poller's object, or one not set yet) stands for an inert
 * placeholder. Never for a request: the poller's own wiring resolves its secrets.
 */
export function readSettings(env: Env, entry: CatalogEntry): PollerEntry {
  const values = envValues(env);
  if (entry.kind === 'runtime') {
    const policy = readFleetPolicy(values.FLEET_POLICY);
    if (!policy.ok) {
      return { name: entry.name, ok: false, errors: [policy.error], enabled: true };
    }
    return checkRuntimePut(entry.name, entry.raw, values, [], policy.policy).entry;
  }
  const placeholders = Object.fromEntries(
    referencedNames(entry.raw)
      .filter((reference) => typeof values[reference] !== 'string')
      .map((reference) => [reference, `unresolved-${reference}`]),
  );
  return loadPoller(entry.name, entry.raw, { ...values, ...placeholders });
}

/** A poller's settings by name (see readSettings), or why there are none. */
export async function pollerSettings(env: Env, name: string): Promise<PollerSettings> {
  const entry = await findPoller(env, name);
  if (entry === null) return { ok: false, entry, error: `no poller "${name}"` };
  const loaded = readSettings(env, entry);
  if (!loaded.ok) return { ok: false, entry, error: loaded.errors.join('; ') };
  return { ok: true, entry, config: loaded.config, secrets: loaded.secrets };
}

/** The Durable Object of a poller. */
export function pollerObject(env: Env, name: string) {
  return env.POLLER.get(env.POLLER.idFromName(name));
}
