import { type FleetPolicy, NEVER_REACHABLE, readFleetPolicy } from './fleet-policy.ts';
import { reachProblems } from './fleet-reach.ts';
import { referencedNames } from './interpolate.ts';
import { type LoadOptions, loadPoller, type PollerEntry } from './load.ts';

/**
 * A runtime poller's config (PUT /pollers/:name) is read under FLEET_POLICY: `${NAME}` is its
 * own secret, or a Worker var or secret the policy lists, never another; and what the config
 * reaches (hosts, bindings, handlers) must be in the policy.
 */

/**
 * What a runtime poller's `${NAME}` resolves against: its own secrets first, then only the
 * Worker vars and secrets that FLEET_POLICY.env lists. Any other Worker secret stays out of
 * reach, set or not.
 */
export function runtimeScope(
  env: Record<string, unknown>,
  own: Readonly<Record<string, string>>,
  policy: FleetPolicy,
): Record<string, unknown> {
  const listed = policy.env
    .filter((name) => !NEVER_REACHABLE.has(name))
    .map((name) => [name, env[name]] as const);
  return { ...Object.fromEntries(listed), ...own };
}

/** The refusals, the hint for a missing `${NAME}` and the reach checks of runtime poller `poller`. */
export function runtimeLoadOptions(poller: string, policy: FleetPolicy): LoadOptions {
  return {
    refuse: (name) =>
      NEVER_REACHABLE.has(name)
        ? `${name} is the Worker's own credential: FLEET_POLICY.env can never list it, and no runtime poller may use it`
        : undefined,
    unsetHint: (name) => {
      const worker = policy.env.includes(name)
        ? ', or as the Worker secret FLEET_POLICY.env lists'
        : '';
      return `set it with PUT /pollers/${poller}/secrets/${name}${worker}`;
    },
    check: (config) => reachProblems(poller, config, policy),
  };
}

/** Validates runtime poller `name` with its own secrets' values, under `policy`. */
export function loadRuntimePoller(
  name: string,
  raw: unknown,
  env: Record<string, unknown>,
  own: Readonly<Record<string, string>>,
  policy: FleetPolicy,
): PollerEntry {
  return loadPoller(name, raw, runtimeScope(env, own, policy), runtimeLoadOptions(name, policy));
}

/**
 * A runtime config checked at PUT, where the poller's own secrets are known by name only: each
 * is read as a placeholder, as is every `${NAME}` not set yet (reported as `unset`: it is a
 * per-poller secret to set, and the poller waits for it).
 */
export function checkRuntimePut(
  name: string,
  raw: unknown,
  env: Record<string, unknown>,
  ownNames: readonly string[],
  policy: FleetPolicy,
): { entry: PollerEntry; unset: string[] } {
  const scope = runtimeScope(env, {}, policy);
  const unset = referencedNames(raw).filter(
    (reference) =>
      !NEVER_REACHABLE.has(reference) && !ownNames.includes(reference) && !isSet(scope[reference]),
  );
  const placeholders = Object.fromEntries(
    [...ownNames, ...unset].map((reference) => [reference, `set-later-${reference}`]),
  );
  return { entry: loadRuntimePoller(name, raw, env, placeholders, policy), unset };
}

function isSet(value: unknown): boolean {
  return typeof value === 'string' && value !== '';
}

/**
 * A stored runtime config, as the poller is wired: under the Worker's FLEET_POLICY as it is
 * now (a policy tightened since the PUT applies at once); an invalid policy wires nothing.
 */
export function loadStoredRuntimePoller(
  name: string,
  raw: unknown,
  env: Record<string, unknown>,
  own: Readonly<Record<string, string>>,
): PollerEntry {
  const policy = readFleetPolicy(env.FLEET_POLICY);
  if (!policy.ok)
    return { name, ok: false, errors: [`poller "${name}": ${policy.error}`], enabled: true };
  return loadRuntimePoller(name, raw, env, own, policy.policy);
}
