import { type LoadedPollers, loadPollers, readPollersTable } from './config/load.ts';
import { registryOf } from './registry/registry.ts';

/**
 * The one place that knows which pollers exist and where their config comes from:
 * - static pollers: `[vars.POLLERS.<name>]` in wrangler.toml (env.POLLERS), per deploy;
 * - runtime pollers: created with `PUT /pollers/:name`, listed in the registry, their config
 *   (as written, `${NAME}` unresolved) kept in their own Durable Object.
 * A static poller's name cannot be taken by a runtime one.
 */

/** The Worker's bindings and secrets, as the config's `${NAME}` interpolation reads them. */
export function envValues(env: Env): Record<string, unknown> {
  return env as unknown as Record<string, unknown>;
}

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

/** True when `name` is a poller: declared in POLLERS, or a runtime poller in the registry. */
export async function pollerExists(env: Env, name: string): Promise<boolean> {
  if (isStatic(env, name)) return true;
  const entry = await registryOf(env).get(name);
  return entry !== null && entry.phase !== 'deleting';
}

/** The Durable Object of a poller. */
export function pollerObject(env: Env, name: string) {
  return env.POLLER.get(env.POLLER.idFromName(name));
}
