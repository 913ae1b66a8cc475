import { envValues, findPoller, pollerObject, STATIC_INCARNATION } from '../catalog.ts';
import { readFleetPolicy } from '../config/fleet-policy.ts';
import { secretsOffOrigin, takeKeepSecrets } from '../config/origin-change.ts';
import { checkRuntimePut } from '../config/runtime-poller.ts';
import type { PollerConfig } from '../config/schema.ts';
import { readCappedText } from './read-capped.ts';

/** A PUT /pollers/:name the fleet may store, or the answer that refuses it. */
export type AdmittedPut =
  | {
      ok: true;
      /** The config as written, `keep_secrets` taken out: what the registry and object keep. */
      raw: unknown;
      text: string;
      /** The config validated (with placeholders for secrets): for its labels. */
      config: PollerConfig;
      /** `${NAME}`s that are neither set nor the poller's own secret yet: the poller waits. */
      unset: string[];
      /** The poller's own secrets removed because the replace sends them to a new origin. */
      secretsUnset: string[];
    }
  | { ok: false; status: 400 | 413 | 500; body: { error: string; errors?: string[] } };

/**
 * Reads a runtime poller's PUT body under FLEET_POLICY (size first, then the config and what
 * it reaches) and, once it is accepted, unsets the poller's own secrets that a new origin
 * would receive (unless `"keep_secrets": true`): before the config is stored, so no run of
 * the new config ever holds them. An invalid policy refuses every PUT (fail closed).
 */
export async function admitRuntimePut(
  env: Env,
  name: string,
  request: Request,
): Promise<AdmittedPut> {
  const policy = readFleetPolicy(env.FLEET_POLICY);
  if (!policy.ok) return { ok: false, status: 500, body: { error: policy.error } };
  const max = policy.policy.max_config_bytes;
  const read = await readCappedText(request, max);
  if (!read.ok) {
    const error = `a poller's config is at most ${max} bytes (FLEET_POLICY.max_config_bytes)`;
    return { ok: false, status: 413, body: { error } };
  }
  let body: unknown;
  try {
    body = JSON.parse(read.text);
  } catch {
    return {
      ok: false,
      status: 400,
      body: { error: "the body must be one poller's config as JSON" },
    };
  }
  const taken = takeKeepSecrets(body);
  if (!taken.ok) {
    const errors = [`poller "${name}": ${taken.error}`];
    return { ok: false, status: 400, body: { error: 'invalid poller config', errors } };
  }
  const raw = taken.config;
  const previous = await findPoller(env, name);
  const replacing = previous?.kind === 'runtime';
  const object = pollerObject(env, name);
  const own = replacing ? (await object.listSecrets()).map((secret) => secret.name) : [];
  const moving = replacing && !taken.keepSecrets ? secretsOffOrigin(previous.raw, raw, own) : [];
  const kept = own.filter((secret) => !moving.includes(secret));
  const { entry, unset } = checkRuntimePut(name, raw, envValues(env), kept, policy.policy);
  if (!entry.ok) {
    return {
      ok: false,
      status: 400,
      body: { error: 'invalid poller config', errors: entry.errors },
    };
  }
  // Meant for the poller looked up above: refused (nothing to move) if deleted since.
  const meant = previous?.kind === 'runtime' ? previous.incarnation : STATIC_INCARNATION;
  for (const secret of moving) await object.deleteSecret(meant, secret);
  return {
    ok: true,
    raw,
    text: JSON.stringify(raw),
    config: entry.config,
    unset,
    secretsUnset: moving,
  };
}
