import { type ListQuery, registryOf } from '../registry/registry.ts';
import { syncStatic } from './lifecycle.ts';

/**
 * The fleet's lists, as the registry keeps them without waking a poller: which pollers there
 * are, how many in each state, which are at fault, which were deleted. The routes, the
 * dashboard and /metrics ask here, not the registry's object.
 */

/** One page of the pollers in name order, this deploy's static ones synced first so it lists them. */
export async function pollerPage(env: Env, query: ListQuery) {
  await syncStatic(env);
  return registryOf(env).list(query);
}

/** A page of the pollers and the fleet counted by state and kind, both after the same sync. */
export async function overviewLists(env: Env, query: ListQuery) {
  await syncStatic(env);
  const registry = registryOf(env);
  const [page, groups] = await Promise.all([registry.list(query), registry.summary()]);
  return { page, groups };
}

/**
 * The fleet counted by state and kind, and by the values of `labelKeys`: one group per
 * distinct combination, at most `maxGroups` (the rest summed into one).
 */
export function fleetGroups(env: Env, labelKeys: string[], maxGroups: number) {
  return registryOf(env).summary(labelKeys, maxGroups);
}

/** The fleet's counts, and the first `limit` runtime pollers at fault. */
export function fleetHealth(env: Env, limit: number) {
  return registryOf(env).fleetHealth(limit);
}

/** The newest `limit` deletions, newest first. */
export function deletionTrail(env: Env, limit: number) {
  return registryOf(env).deletions(limit);
}
