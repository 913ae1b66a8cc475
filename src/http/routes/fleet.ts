import { Hono } from 'hono';
import * as z from 'zod';
import { envValues, isStatic, pollerObject, staticConfig, staticPollers } from '../../catalog.ts';
import { loadPoller } from '../../config/load.ts';
import { isoTime, isoTimeOrNull } from '../../engine/iso-time.ts';
import { type RegistryEntry, registryOf } from '../../registry/registry.ts';
import { requireToken } from '../auth.ts';

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().optional(),
  /** `key=value` (or `key:value`). */
  label: z
    .string()
    .regex(/^[^=:]+[=:].*$/, 'must be key=value')
    .optional(),
  state: z.string().optional(),
  search: z.string().optional(),
});

/** A `${NAME}` in a config as written. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * The fleet: runtime pollers created, replaced and deleted through the API (ADMIN_TOKEN),
 * and every poller, static and runtime, listed from the registry without waking one.
 */
export const fleetRoutes = new Hono<{ Bindings: Env }>()
  .get('/', requireToken('read'), async (c) => {
    const query = listQuery.safeParse(c.req.query());
    if (!query.success) return c.json({ error: query.error.issues[0]?.message }, 400);
    const registry = registryOf(c.env);
    await syncStatic(c.env);
    const { label, ...rest } = query.data;
    // The key ends at the first "=" (or ":"): the value may hold either.
    const split = (label ?? '').search(/[=:]/);
    const page = await registry.list({
      ...rest,
      ...(label === undefined
        ? {}
        : { label: { key: label.slice(0, split), value: label.slice(split + 1) } }),
    });
    const now = Date.now();
    return c.json({
      items: page.items.map((entry) => listed(entry, now)),
      next_cursor: page.nextCursor,
    });
  })
  .get('/deletions', requireToken('read'), async (c) => {
    const deletions = await registryOf(c.env).deletions(100);
    return c.json({
      deletions: deletions.map((entry) => ({
        name: entry.name,
        at: isoTime(entry.at),
        ...(JSON.parse(entry.detail) as object),
      })),
    });
  })
  .get('/:name/config', requireToken('read'), async (c) => {
    const name = c.req.param('name');
    const declared = staticConfig(c.env, name);
    if (declared !== undefined) return c.json({ name, kind: 'static', config: declared });
    const entry = await registryOf(c.env).get(name);
    if (entry === null || entry.config === null || entry.phase === 'deleting') {
      return c.json({ error: `no poller "${name}" in POLLERS` }, 404);
    }
    return c.json({
      name,
      kind: 'runtime',
      version: entry.version,
      config: JSON.parse(entry.config) as unknown,
    });
  })
  .put('/:name', requireToken('admin'), async (c) => {
    const name = c.req.param('name');
    if (isStatic(c.env, name)) {
      return c.json(
        { error: `poller "${name}" is declared in wrangler.toml (POLLERS): change it there` },
        409,
      );
    }
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return c.json({ error: "the body must be one poller's config as JSON" }, 400);
    }
    const text = JSON.stringify(raw);
    // Secrets may be set after the poller (PUT …/secrets/:NAME): a `${NAME}` that is not set
    // yet is checked for its shape here, reported, and leaves the poller misconfigured
    // until it is set.
    const missing = [
      ...new Set([...text.matchAll(REFERENCE)].map((match) => match[1] ?? '')),
    ].filter((reference) => typeof envValues(c.env)[reference] !== 'string');
    const placeholders = Object.fromEntries(
      missing.map((reference) => [reference, `set-later-${reference}`]),
    );
    const entry = loadPoller(name, raw, { ...envValues(c.env), ...placeholders });
    if (!entry.ok) return c.json({ error: 'invalid poller config', errors: entry.errors }, 400);
    const now = Date.now();
    const registry = registryOf(c.env);
    const begun = await registry.beginPut(name, raw, entry.config.labels, now);
    if (!begun.ok) {
      return c.json({ error: `poller "${name}" is being deleted; try again when it is gone` }, 409);
    }
    const configured = await pollerObject(c.env, name).configure(name, text, begun.version);
    await registry.activate(name, begun.version, Date.now());
    return c.json(
      {
        name,
        version: begun.version,
        created: begun.created,
        ...(missing.length > 0 ? { unset_secrets: missing } : {}),
        ...(configured.ok ? {} : { config_errors: configured.errors }),
      },
      begun.created ? 201 : 200,
    );
  })
  .delete('/:name', requireToken('admin'), async (c) => {
    const name = c.req.param('name');
    if (isStatic(c.env, name)) {
      return c.json(
        { error: `poller "${name}" is declared in wrangler.toml (POLLERS): remove it there` },
        409,
      );
    }
    const reason = c.req.query('reason') ?? null;
    const deleted = await deletePoller(c.env, name, { reason });
    if (deleted === 'not_found') return c.json({ error: `no poller "${name}" in POLLERS` }, 404);
    return c.json({ name, deleted: true });
  });

/**
 * Deletes a runtime poller in the order that a crash can never leave half-done: the registry
 * marks it first, then its object is erased (alarm and storage), then the registry forgets it
 * and keeps the deletion. The watchdog finishes a deletion a crash interrupted.
 */
export async function deletePoller(
  env: Env,
  name: string,
  detail: Record<string, unknown>,
): Promise<'deleted' | 'not_found' | 'static'> {
  const registry = registryOf(env);
  const begun = await registry.beginDelete(name, Date.now());
  if (begun !== 'deleting') return begun;
  await pollerObject(env, name).erase();
  await registry.finishDelete(name, detail, Date.now());
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

function listed(entry: RegistryEntry, now: number) {
  return {
    name: entry.name,
    kind: entry.kind,
    labels: entry.labels,
    state: entry.phase === 'active' ? (entry.state ?? 'unknown') : entry.phase,
    checkpoint: isoTimeOrNull(entry.checkpoint),
    lag_seconds:
      entry.checkpoint === null ? null : Math.max(0, Math.round((now - entry.checkpoint) / 1000)),
    dead_letters: entry.deadLetters,
    reported_at: isoTimeOrNull(entry.reportedAt),
  };
}
