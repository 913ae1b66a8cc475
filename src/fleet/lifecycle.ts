import { pollerObject, staticPollers } from '../catalog.ts';
import { registryOf } from '../registry/registry.ts';

/**
 * The steps of a runtime poller's life that span the registry and the poller's object, in
 * the order a crash can never leave half-done: the registry first, then the object, then the
 * registry again. The watchdog finishes what a crash interrupted with these same functions.
 */

/** What a config push came to. */
export type PushOutcome =
  | { outcome: 'configured'; errors: string[] }
  /** The name was deleted meanwhile: the object refused the incarnation it was issued for. */
  | { outcome: 'deleted' };

/**
 * A PUT's first step: the registry takes the runtime poller's config as its next version (or
 * creates it) and issues it for an incarnation; refused while the name is being deleted.
 * pushConfig then gives it to the object.
 */
export function beginPut(env: Env, name: string, config: unknown, labels: Record<string, string>) {
  return registryOf(env).beginPut(name, config, labels, Date.now());
}

/**
 * Gives a poller's object the config the registry issued (`version` of `incarnation`), then
 * marks it active. An erased object refuses an incarnation it has a tombstone for, so a push
 * that lost a race with DELETE resurrects nothing (R14).
 */
export async function pushConfig(
  env: Env,
  name: string,
  issued: { config: string; version: number; incarnation: number },
): Promise<PushOutcome> {
  const reply = await pollerObject(env, name).configure(
    issued.config,
    issued.version,
    issued.incarnation,
  );
  if (!reply.ok && reply.refused === 'erased') return { outcome: 'deleted' };
  await registryOf(env).activate(name, issued.version, Date.now());
  return { outcome: 'configured', errors: reply.ok ? [] : reply.errors };
}

/**
 * Deletes a runtime poller: the registry marks it, its object is erased (alarm and storage,
 * leaving a tombstone of the incarnation), then the registry forgets it and keeps the
 * deletion. When this returns, no run of that incarnation delivers anything more.
 */
export async function deletePoller(
  env: Env,
  name: string,
  detail: Record<string, unknown>,
): Promise<'deleted' | 'not_found' | 'static'> {
  const registry = registryOf(env);
  const begun = await registry.beginDelete(name, Date.now());
  if (begun.outcome !== 'deleting') return begun.outcome;
  await pollerObject(env, name).erase(begun.incarnation);
  await registry.finishDelete(name, detail, Date.now());
  console.log(JSON.stringify({ event: 'admin', poller: name, action: 'poller.deleted', detail }));
  return 'deleted';
}

/** The static pollers of this deploy, as the registry lists them. */
export async function syncStatic(env: Env): Promise<void> {
  const pollers = staticPollers(env).pollers.map((entry) => ({
    name: entry.name,
    labels: entry.ok ? entry.config.labels : {},
  }));
  await registryOf(env).syncStatic(pollers, Date.now());
}
