import { Hono } from 'hono';
import * as z from 'zod';
import { findPoller, isStatic } from '../../catalog.ts';
import { RESERVED_NAMES } from '../../config/load.ts';
import { LABEL_KEY } from '../../config/schema.ts';
import { isoTime, isoTimeOrNull } from '../../engine/iso-time.ts';
import { deletePoller, pushConfig, syncStatic } from '../../fleet/lifecycle.ts';
import { type RegistryEntry, registryOf } from '../../registry/registry.ts';
import { reportedLagSeconds } from '../../registry/reported-lag.ts';
import { requireToken } from '../auth.ts';
import { LABEL_KEY_RULE } from '../dashboard/fleet-query.ts';
import { admitRuntimePut } from '../runtime-put.ts';

const listQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().optional(),
  /** `key=value` (or `key:value`): the key ends at the first "=" or ":", the value may hold either. */
  label: z
    .string()
    .regex(/^[^=:]+[=:].*$/s, 'must be key=value')
    .transform((label) => {
      const split = label.search(/[=:]/);
      return { key: label.slice(0, split), value: label.slice(split + 1) };
    })
    .pipe(z.object({ key: z.string().regex(LABEL_KEY, LABEL_KEY_RULE), value: z.string() }))
    .optional(),
  state: z.string().optional(),
  search: z.string().optional(),
});

/** A deletion's reason is a note for the trail, not a document: it is kept for 90 days. */
const MAX_DELETE_REASON_CHARS = 500;

/**
 * The fleet: runtime pollers created, replaced and deleted through the API (ADMIN_TOKEN),
 * and every poller, static and runtime, listed from the registry without waking one.
 */
export const fleetRoutes = new Hono<{ Bindings: Env }>()
  .get('/', requireToken('read'), async (c) => {
    const query = listQuery.safeParse(c.req.query());
    if (!query.success) {
      const issue = query.error.issues[0];
      return c.json({ error: `${issue?.path.join('.') || 'query'}: ${issue?.message}` }, 400);
    }
    const registry = registryOf(c.env);
    await syncStatic(c.env);
    const page = await registry.list(query.data);
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
    const entry = await findPoller(c.env, name);
    if (entry === null) return c.json({ error: `no poller "${name}" in POLLERS` }, 404);
    if (entry.kind === 'static') return c.json({ name, kind: 'static', config: entry.raw });
    return c.json({ name, kind: 'runtime', version: entry.version, config: entry.raw });
  })
  .put('/:name', requireToken('admin'), async (c) => {
    const name = c.req.param('name');
    if (isStatic(c.env, name)) {
      return c.json(
        { error: `poller "${name}" is declared in wrangler.toml (POLLERS): change it there` },
        409,
      );
    }
    if (RESERVED_NAMES.has(name)) {
      return c.json({ error: `"${name}" cannot name a poller: /pollers/${name} is a route` }, 400);
    }
    // Read under FLEET_POLICY: size, config, what it reaches. Secrets may be set after the
    // poller (PUT …/secrets/:NAME): a `${NAME}` not set yet is reported in `unset_secrets`,
    // and leaves the poller misconfigured until it is set.
    const entry = await admitRuntimePut(c.env, name, c.req.raw);
    if (!entry.ok) return c.json(entry.body, entry.status);
    const { raw, text, unset: missing } = entry;
    const now = Date.now();
    const registry = registryOf(c.env);
    const begun = await registry.beginPut(name, raw, entry.config.labels, now);
    if (!begun.ok) {
      return c.json({ error: `poller "${name}" is being deleted; try again when it is gone` }, 409);
    }
    const pushed = await pushConfig(c.env, name, { config: text, ...begun });
    if (pushed.outcome === 'deleted') {
      return c.json({ error: `poller "${name}" was deleted while this PUT was applied` }, 409);
    }
    return c.json(
      {
        name,
        version: begun.version,
        created: begun.created,
        ...(missing.length > 0 ? { unset_secrets: missing } : {}),
        ...(entry.secretsUnset.length > 0 ? { secrets_unset: entry.secretsUnset } : {}),
        ...(pushed.errors.length > 0 ? { config_errors: pushed.errors } : {}),
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
    if (reason !== null && reason.length > MAX_DELETE_REASON_CHARS) {
      return c.json({ error: `reason: at most ${MAX_DELETE_REASON_CHARS} characters` }, 400);
    }
    const deleted = await deletePoller(c.env, name, { reason });
    if (deleted === 'not_found') return c.json({ error: `no poller "${name}" in POLLERS` }, 404);
    return c.json({ name, deleted: true });
  });

function listed(entry: RegistryEntry, now: number) {
  return {
    name: entry.name,
    kind: entry.kind,
    labels: entry.labels,
    state: entry.phase === 'active' ? (entry.state ?? 'unknown') : entry.phase,
    checkpoint: isoTimeOrNull(entry.checkpoint),
    // As the poller reported it, at reported_at (see reportedLagSeconds).
    lag_seconds: reportedLagSeconds(entry, now),
    reported_at: isoTimeOrNull(entry.reportedAt),
    dead_letters: entry.deadLetters,
  };
}
