import { envValues } from '../env-values.ts';

/**
 * Where a poller's `source.auth.refresh_token` comes from, read from its config as written
 * (a name, never a value): the `${NAME}` it names, and whether that is the poller's own
 * secret (PUT /pollers/:name/secrets/NAME) or a Worker secret or var (a static poller's, which
 * wins over its own secret of that name). Null when the config names no `${NAME}` there.
 */
export interface RefreshSecret {
  name: string;
  where: 'poller' | 'worker';
}

/** The `${NAME}` that a config as written gives `source.auth.refresh_token`, if any. */
export function refreshSecretName(raw: unknown): string | null {
  let value: unknown = raw;
  for (const key of ['source', 'auth', 'refresh_token']) {
    value = value !== null && typeof value === 'object' ? Reflect.get(value, key) : undefined;
  }
  const match = typeof value === 'string' ? /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(value) : null;
  return match?.[1] ?? null;
}

/**
 * Where the refresh token of a poller's config as written comes from: for a static poller
 * (`worker` is the Worker's env), a Worker secret or var of that name comes first (as the
 * wiring reads them); a runtime poller's is its own.
 */
export function refreshSecretOf(raw: unknown, worker: Env | null): RefreshSecret | null {
  const name = refreshSecretName(raw);
  if (name === null) return null;
  const value = worker === null ? undefined : envValues(worker)[name];
  return { name, where: typeof value === 'string' && value !== '' ? 'worker' : 'poller' };
}

/** What gives poller `poller` a new refresh token: the one step that works for it. */
export function reconnectStep(poller: string, secret: RefreshSecret | null): string {
  const give = `give poller "${poller}" a new refresh token`;
  if (secret === null) return `${give} in its config's source.auth.refresh_token`;
  if (secret.where === 'worker') {
    return `${give} in the Worker secret ${secret.name} (npx wrangler secret put ${secret.name}), which comes first for a static poller`;
  }
  return `${give}: PUT /pollers/${poller}/secrets/${secret.name}`;
}
