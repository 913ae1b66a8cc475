import { pollerExists } from '../catalog.ts';
import { fleetHealth } from '../fleet/lists.ts';
import type { FleetHealth } from '../registry/registry.ts';

/**
 * What the routes anyone may call without a token (/healthz, a nudge with a NUDGE_TOKEN) read
 * of the registry, kept for a few seconds in the isolate: an uptime monitor polling every
 * second, or a storm of upstream webhooks, costs the registry (one Durable Object for the
 * whole fleet) one read per isolate every few seconds, not one per request. Callers with
 * STATUS_TOKEN or ADMIN_TOKEN read the registry itself.
 */

/**
 * How long /healthz reuses the fleet's counts, and a nudge that a name is a poller: a new
 * fault shows within 10 s; a deleted poller's object refuses its nudges by itself.
 */
export const PUBLIC_CACHE_TTL_MS = 10_000;
/**
 * A name the registry did not know is asked again after this, so a poller created a moment
 * ago is nudgeable within a second, even if a nudge came before it existed.
 */
export const UNKNOWN_NAME_TTL_MS = 1_000;
/**
 * Names not in the cache looked up per second, per isolate: beyond it, a nudge for such a
 * name is refused (401, as for no poller), so random names cannot cost a registry call each.
 */
export const NAME_LOOKUPS_PER_SECOND = 20;
/** Names kept: the oldest go first, so the cache stays small whatever names come. */
const MAX_NAMES = 10_000;

interface CacheState {
  health: { value: Promise<FleetHealth>; until: number } | null;
  names: Map<string, { known: Promise<boolean>; until: number }>;
  lookups: { second: number; count: number };
}

/**
 * One cache per registry binding: an isolate has one (its env is the same for every
 * request), and a test's wrapped binding starts with a cache of its own.
 */
const caches = new WeakMap<object, CacheState>();

function cacheOf(env: Env): CacheState {
  let state = caches.get(env.REGISTRY);
  if (state === undefined) {
    state = { health: null, names: new Map(), lookups: { second: 0, count: 0 } };
    caches.set(env.REGISTRY, state);
  }
  return state;
}

/** The fleet's counts and the runtime pollers at fault, at most PUBLIC_CACHE_TTL_MS old. */
export function cachedFleetHealth(env: Env, limit: number, now = Date.now()): Promise<FleetHealth> {
  const state = cacheOf(env);
  if (state.health !== null && state.health.until > now) return state.health.value;
  const value = freshFleetHealth(env, limit);
  const entry = { value, until: now + PUBLIC_CACHE_TTL_MS };
  state.health = entry;
  // A failed read is not kept: the next request asks again.
  value.catch(() => {
    if (state.health === entry) state.health = null;
  });
  return value;
}

/** The fleet's counts and the runtime pollers at fault, from the registry now. */
export async function freshFleetHealth(env: Env, limit: number): Promise<FleetHealth> {
  return fleetHealth(env, limit);
}

/**
 * Whether `name` is a poller (static, or runtime in the registry), as known at most
 * PUBLIC_CACHE_TTL_MS ago (UNKNOWN_NAME_TTL_MS for a name that was not).
 */
export function cachedPollerExists(env: Env, name: string, now = Date.now()): Promise<boolean> {
  const state = cacheOf(env);
  const cached = state.names.get(name);
  if (cached !== undefined && cached.until > now) return cached.known;
  if (!takeLookup(state, now)) return Promise.resolve(false);
  const known = pollerExists(env, name);
  const entry = { known, until: now + PUBLIC_CACHE_TTL_MS };
  state.names.delete(name); // re-inserted last: the oldest names are evicted first
  state.names.set(name, entry);
  known.then(
    (exists) => {
      if (!exists) entry.until = now + UNKNOWN_NAME_TTL_MS;
    },
    () => {
      if (state.names.get(name) === entry) state.names.delete(name);
    },
  );
  for (const oldest of state.names.keys()) {
    if (state.names.size <= MAX_NAMES) break;
    state.names.delete(oldest);
  }
  return known;
}

/** One registry lookup out of this second's NAME_LOOKUPS_PER_SECOND, or false when spent. */
function takeLookup(state: CacheState, now: number): boolean {
  const second = Math.floor(now / 1000);
  if (state.lookups.second !== second) state.lookups = { second, count: 0 };
  if (state.lookups.count >= NAME_LOOKUPS_PER_SECOND) return false;
  state.lookups.count += 1;
  return true;
}
