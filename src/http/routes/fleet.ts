import { createRoute, z } from '@hono/zod-openapi';
import { findPoller, isStatic } from '../../catalog.ts';
import { RESERVED_NAMES } from '../../config/load.ts';
import { LABEL_KEY } from '../../config/schema.ts';
import { isoTime, isoTimeOrNull } from '../../engine/iso-time.ts';
import { beginPut, deletePoller, pushConfig } from '../../fleet/lifecycle.ts';
import { deletionTrail, pollerPage } from '../../fleet/lists.ts';
import type { RegistryEntry } from '../../registry/registry.ts';
import { reportedLagSeconds } from '../../registry/reported-lag.ts';
import { LABEL_KEY_RULE } from '../dashboard/fleet-query.ts';
import { unknownPoller } from '../known-poller.ts';
import { adminRefusals, guarded, readRefusals } from '../openapi/access.ts';
import { apiRoutes } from '../openapi/api-routes.ts';
import { POLLER_CONFIG_REF } from '../openapi/document.ts';
import { errorResponse, unknownPollerResponse } from '../openapi/errors.ts';
import { json } from '../openapi/json.ts';
import { PollerName } from '../openapi/params.ts';
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

const ListedPoller = z
  .object({
    name: z.string(),
    kind: z.enum(['static', 'runtime']),
    labels: z.record(z.string(), z.string()),
    state: z.string().meta({ description: 'ok, failing, misconfigured, paused, … or deleting' }),
    checkpoint: z.string().nullable(),
    lag_seconds: z.number().nullable(),
    reported_at: z.string().nullable(),
    dead_letters: z.number().int(),
  })
  .openapi('ListedPoller');

const PutAnswer = z.object({
  name: z.string(),
  version: z.number().int(),
  created: z.boolean(),
  unset_secrets: z.array(z.string()).optional(),
  secrets_unset: z.array(z.string()).optional(),
  config_errors: z.array(z.string()).optional(),
});

const list = createRoute({
  method: 'get',
  path: '/',
  summary: 'List every poller, static and runtime, from the registry (paged)',
  ...guarded('read'),
  request: { query: listQuery },
  responses: {
    200: json(
      z.object({ items: z.array(ListedPoller), next_cursor: z.string().nullable() }),
      'One page of pollers, by name.',
    ),
    400: errorResponse('A query parameter that is not allowed or not valid.'),
    ...readRefusals,
  },
});

const deletions = createRoute({
  method: 'get',
  path: '/deletions',
  summary: 'The newest 100 deletions of runtime pollers (the audit trail)',
  ...guarded('read'),
  responses: {
    200: json(
      z.object({
        deletions: z.array(z.looseObject({ name: z.string(), at: z.string() })),
      }),
      'Deletions, newest first, with their reason and what was erased.',
    ),
    ...readRefusals,
  },
});

const config = createRoute({
  method: 'get',
  path: '/{name}/config',
  summary: "A poller's stored config, as written (secrets stay ${NAME})",
  ...guarded('read'),
  request: { params: PollerName },
  responses: {
    200: json(
      z.object({
        name: z.string(),
        kind: z.enum(['static', 'runtime']),
        version: z.number().int().optional(),
        config: z.unknown(),
      }),
      'The config, and for a runtime poller its version.',
    ),
    404: unknownPollerResponse,
    ...readRefusals,
  },
});

const put = createRoute({
  method: 'put',
  path: '/{name}',
  summary: 'Create (201) or replace (200) a runtime poller',
  description:
    "The body is exactly one poller's config as JSON (the same keys as a POLLERS entry), read under FLEET_POLICY.",
  ...guarded('admin'),
  request: {
    params: PollerName,
    body: {
      description:
        "One poller's config (schema/poller.schema.json), plus an optional keep_secrets.",
      required: true,
      content: { 'application/json': { schema: POLLER_CONFIG_REF } },
    },
  },
  responses: {
    200: json(PutAnswer, 'Replaced.'),
    201: json(PutAnswer, 'Created.'),
    400: errorResponse('Not JSON, an invalid config, or a reserved name.'),
    409: errorResponse('A static poller of that name, or the poller is being deleted.'),
    413: errorResponse('Larger than FLEET_POLICY.max_config_bytes.'),
    500: errorResponse('FLEET_POLICY is not valid: every PUT is refused.'),
    ...adminRefusals,
  },
});

const remove = createRoute({
  method: 'delete',
  path: '/{name}',
  summary: "Delete a runtime poller for good (its object's storage is erased)",
  ...guarded('admin'),
  request: {
    params: PollerName,
    query: z.object({
      reason: z
        .string()
        .max(MAX_DELETE_REASON_CHARS, `at most ${MAX_DELETE_REASON_CHARS} characters`)
        .optional(),
    }),
  },
  responses: {
    200: json(z.object({ name: z.string(), deleted: z.literal(true) }), 'Deleted.'),
    400: errorResponse('A reason longer than 500 characters: nothing is deleted.'),
    404: unknownPollerResponse,
    409: errorResponse('A static poller: remove it from wrangler.toml.'),
    ...adminRefusals,
  },
});

/**
 * The fleet: runtime pollers created, replaced and deleted through the API (ADMIN_TOKEN),
 * and every poller, static and runtime, listed from the registry without waking one.
 */
export const fleetRoutes = apiRoutes()
  .openapi(list, async (c) => {
    const page = await pollerPage(c.env, c.req.valid('query'));
    const now = Date.now();
    return c.json(
      { items: page.items.map((entry) => listed(entry, now)), next_cursor: page.nextCursor },
      200,
    );
  })
  .openapi(deletions, async (c) => {
    const trail = await deletionTrail(c.env, 100);
    return c.json(
      {
        deletions: trail.map((entry) => ({
          name: entry.name,
          at: isoTime(entry.at),
          ...(JSON.parse(entry.detail) as object),
        })),
      },
      200,
    );
  })
  .openapi(config, async (c) => {
    const { name } = c.req.valid('param');
    const entry = await findPoller(c.env, name);
    if (entry === null) return c.json(unknownPoller(name), 404);
    if (entry.kind === 'static')
      return c.json({ name, kind: 'static' as const, config: entry.raw }, 200);
    return c.json(
      { name, kind: 'runtime' as const, version: entry.version, config: entry.raw },
      200,
    );
  })
  .openapi(put, async (c) => {
    const { name } = c.req.valid('param');
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
    const begun = await beginPut(c.env, name, raw, entry.config.labels);
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
  .openapi(remove, async (c) => {
    const { name } = c.req.valid('param');
    if (isStatic(c.env, name)) {
      return c.json(
        { error: `poller "${name}" is declared in wrangler.toml (POLLERS): remove it there` },
        409,
      );
    }
    const { reason = null } = c.req.valid('query');
    const deleted = await deletePoller(c.env, name, { reason });
    if (deleted === 'not_found') return c.json(unknownPoller(name), 404);
    return c.json({ name, deleted: true as const }, 200);
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
