import { handlers } from '../handlers/index.ts';
import type { Handler } from '../handlers/types.ts';

/** A handler from the registry, or an error naming the ones there are. */
export function findHandler(
  name: string,
  key: string,
): { ok: true; handler: Handler } | { ok: false; error: string } {
  const handler = handlers[name];
  if (handler) return { ok: true, handler };
  const known = Object.keys(handlers).join(', ') || 'none';
  return {
    ok: false,
    error: `${key}: no handler "${name}" is registered in src/handlers (registered: ${known})`,
  };
}
