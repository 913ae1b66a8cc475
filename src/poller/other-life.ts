import { isStatic, STATIC_INCARNATION } from '../catalog.ts';
import type { OtherLife } from './rpc.ts';
import type { ObjectMeta } from './store/meta.ts';

/**
 * Which life of its poller an object runs: STATIC_INCARNATION for a static poller (declared
 * in POLLERS, whatever ran here before), a runtime poller's incarnation, null when none was
 * configured yet (a fresh object, or one from before incarnations), or `erased` when it
 * holds only a tombstone.
 */
export function lifeOf(env: Env, name: string, meta: ObjectMeta): number | null | 'erased' {
  if (meta.tombstoneOnly()) return 'erased';
  if (isStatic(env, name)) return STATIC_INCARNATION;
  return meta.incarnation();
}

/**
 * Why a write meant for life `meant` of the poller `name` may not be made in this object, or
 * null when it may (R14): the object was erased since its caller looked (404, as for a name
 * that is no poller), or runs another incarnation (409: deleted and created again). A fresh
 * object takes the write: it has had no other life (an erase leaves a tombstone).
 */
export function otherLife(
  env: Env,
  name: string,
  meta: ObjectMeta,
  meant: number,
): OtherLife | null {
  const own = lifeOf(env, name, meta);
  if (own === 'erased') {
    return { outcome: 'refused', status: 404, error: `no poller "${name}": it was deleted` };
  }
  if (own === null || own === meant) return null;
  return {
    outcome: 'refused',
    status: 409,
    error: `poller "${name}" was deleted and created again while this request was under way: nothing was changed`,
  };
}
