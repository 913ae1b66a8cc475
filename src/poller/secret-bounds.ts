import { envValues, staticConfig } from '../catalog.ts';
import { referencedNames } from '../config/interpolate.ts';
import { loadPoller, type PollerEntry, readPollersTable } from '../config/load.ts';
import { loadStoredRuntimePoller } from '../config/runtime-poller.ts';
import { originsOf, requestsOf } from '../config/secret-destinations.ts';
import type { SecretOrigins } from '../secrets/index.ts';

/**
 * R18 on the object's side: a poller's own secret goes only to the origins it was set for.
 * Its origins are worked out when it is set (`reachOfOwn`, under the config of that moment),
 * and every wiring refuses a config that would send it anywhere else (`boundProblems`), so no
 * sequence of replaces (a move, then the name again; the name in a key no check knew) takes
 * it to another host. The Worker's own secrets and vars are the operator's, set beside the
 * config in wrangler: they are not bound.
 */

/** The poller's config, static (POLLERS) or else `runtime`, read with its own secrets `own`. */
export type LoadedPoller = { entry: PollerEntry; declared: boolean } | { missing: string };

/** Reads the poller's config as its wiring does: static first, then the runtime one. */
export function loadPollerConfig(
  name: string,
  env: Env,
  runtime: unknown,
  own: Readonly<Record<string, string>>,
): LoadedPoller {
  const declared = staticConfig(env, name);
  const raw = declared ?? runtime;
  if (raw === undefined) {
    const table = readPollersTable(env.POLLERS);
    const missing = table.ok
      ? `poller "${name}" is not declared in POLLERS nor created at run time`
      : table.error;
    return { missing };
  }
  const entry =
    declared === undefined
      ? loadStoredRuntimePoller(name, raw, envValues(env), own)
      : loadPoller(name, raw, { ...own, ...envValues(env) });
  return { entry, declared: declared !== undefined };
}

/**
 * The origins each own secret the poller's config uses would be sent to (by name), under the
 * config as it is now with `own` as its values; a `${NAME}` not set yet stands in as a
 * placeholder, so a secret set before the others is bound all the same. Null when the config
 * does not load: nothing can be said.
 */
export function reachOfOwn(
  name: string,
  env: Env,
  runtime: unknown,
  own: Readonly<Record<string, string>>,
): Map<string, string[]> | null {
  const raw = staticConfig(env, name) ?? runtime;
  const worker = envValues(env);
  const placeholders = referencedNames(raw)
    .filter((reference) => !Object.hasOwn(own, reference) && !isSet(worker[reference]))
    .map((reference) => [reference, `set-later-${reference}`] as const);
  const loaded = loadPollerConfig(name, env, runtime, {
    ...Object.fromEntries(placeholders),
    ...own,
  });
  if ('missing' in loaded || !loaded.entry.ok) return null;
  const { config } = loaded.entry;
  const requests = requestsOf(config, name);
  const reach = new Map<string, string[]>();
  for (const secret of ownUsed(loaded.entry.raw, own, env, loaded.declared)) {
    reach.set(secret, originsOf(requests, own[secret] ?? ''));
  }
  return reach;
}

/**
 * Why a loaded config cannot be wired with the poller's own secrets: one message per secret it
 * would send to an origin it was not set for, naming the secret and the origin.
 */
export function boundProblems(
  name: string,
  loaded: { entry: Extract<PollerEntry, { ok: true }>; declared: boolean },
  env: Env,
  own: Readonly<Record<string, string>>,
  origins: SecretOrigins,
): string[] {
  const used = ownUsed(loaded.entry.raw, own, env, loaded.declared);
  if (used.length === 0) return [];
  const requests = requestsOf(loaded.entry.config, name);
  const problems: string[] = [];
  for (const secret of used) {
    const bound = origins[secret] ?? [];
    const outside = originsOf(requests, own[secret] ?? '').filter((at) => !bound.includes(at));
    if (outside.length === 0) continue;
    const setFor = bound.length === 0 ? 'no origin' : bound.join(', ');
    problems.push(
      `poller "${name}": secret ${secret} was set for ${setFor}, and this config would send it to ${outside.join(', ')}: set it again for the new place (PUT /pollers/${name}/secrets/${secret}) to send it there`,
    );
  }
  return problems;
}

/**
 * The own secrets a config uses as its own: each `${NAME}` a poller secret answers. A static
 * poller's Worker secret or var of the same name comes first (the own one is then unused); a
 * runtime poller's own secret comes first.
 */
function ownUsed(
  raw: unknown,
  own: Readonly<Record<string, string>>,
  env: Env,
  declared: boolean,
): string[] {
  const worker = envValues(env);
  return referencedNames(raw).filter(
    (reference) => Object.hasOwn(own, reference) && !(declared && isSet(worker[reference])),
  );
}

function isSet(value: unknown): boolean {
  return typeof value === 'string' && value !== '';
}
