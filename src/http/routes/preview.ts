import { createRoute, z } from '@hono/zod-openapi';
import { previewUnsaved } from '../../preview/unsaved.ts';
import { knownPoller, pollerObject } from '../known-poller.ts';
import { adminRefusals, guarded } from '../openapi/access.ts';
import { apiRoutes } from '../openapi/api-routes.ts';
import { errorResponse, unknownPollerResponse } from '../openapi/errors.ts';
import { json } from '../openapi/json.ts';
import { jsonBody } from '../openapi/json-body.ts';
import { PollerName } from '../openapi/params.ts';
import { admitPreview, namedPreviewBody, unsavedPreviewBody } from '../preview-body.ts';
import { readJson } from '../read-json.ts';

const PreviewAnswer = z
  .object({
    requests: z.array(
      z.object({
        method: z.string(),
        url: z.string().meta({ description: 'Secrets redacted (***).' }),
        body: z.string().optional(),
        status: z.number().int().nullable(),
        ms: z.number(),
        bytes: z.number().int(),
        error: z.string().optional(),
      }),
    ),
    records: z.array(
      z.object({
        id: z.string().nullable(),
        updated_at: z.string().nullable(),
        version: z.string().nullable(),
        delete: z.boolean(),
        record: z.unknown(),
        record_text: z.string().optional(),
        record_bytes: z.number().int().optional(),
        malformed: z.string().optional(),
      }),
    ),
    window: z.object({ from: z.string(), to: z.string(), bounded: z.boolean(), cut: z.boolean() }),
    checkpoint: z.object({
      from: z.string(),
      from_source: z.enum(['checkpoint', 'start_from', 'asked', 'default']),
      would_commit: z.string().nullable(),
      note: z.string(),
    }),
    warnings: z.array(z.object({ kind: z.string(), message: z.string() })),
    pages: z.number().int(),
    complete: z.boolean(),
  })
  .openapi('Preview');

const unsaved = createRoute({
  method: 'post',
  path: '/preview',
  summary: 'Preview a config: read one window as a run would, deliver and write nothing',
  description:
    'The config is read as PUT /pollers/{name} reads it (FLEET_POLICY, every error at once); the window is read in this request. A refresh_token grant is refused: create the poller paused and preview it by name.',
  ...guarded('admin'),
  request: {
    body: jsonBody(unsavedPreviewBody, 'The config, as PUT /pollers/{name} takes it, and options.'),
  },
  responses: {
    200: json(PreviewAnswer, 'What a run would request and read: nothing was delivered or stored.'),
    400: errorResponse('Not JSON, not { config, … }, or an invalid config (every error).'),
    413: errorResponse('A config larger than FLEET_POLICY.max_config_bytes.'),
    422: errorResponse('An oauth2 refresh_token grant: preview it by name instead.'),
    500: errorResponse('FLEET_POLICY is not valid: every preview is refused.'),
    ...adminRefusals,
  },
});

const named = createRoute({
  method: 'post',
  path: '/{name}/preview',
  summary:
    'Preview a poller: read one window as its next run would, under its lease, deliver and write nothing',
  ...guarded('admin', knownPoller),
  request: {
    params: PollerName,
    body: jsonBody(
      namedPreviewBody,
      'Optional: from (a time, or "checkpoint"), pages, records.',
      false,
    ),
  },
  responses: {
    200: json(
      PreviewAnswer,
      'What its run would request and read: nothing was delivered or stored.',
    ),
    400: errorResponse('A body that is not JSON or not { from, pages, records }.'),
    404: unknownPollerResponse,
    409: errorResponse(
      'A run holds the lease, the upstream asked for no request yet (rate limit), or the config does not load (errors).',
    ),
    ...adminRefusals,
  },
});

/**
 * Previews (ADMIN_TOKEN): a config before it is a poller, and an existing poller, each
 * reading one window through the real source (auth, paging, window, time formats, tombstones)
 * and answering with every request, the records, the window, the checkpoint a run would
 * commit and warnings. They deliver nothing, and write nothing but an audit line (and, by
 * name, the lease and a renewed OAuth token).
 */
export const previewRoutes = apiRoutes()
  .openapi(unsaved, async (c) => {
    const admitted = await admitPreview(c.env, c.req.raw);
    if (!admitted.ok) return c.json(admitted.body, admitted.status);
    const result = await previewUnsaved(c.env, admitted.policy.policy, admitted.raw, admitted.ask);
    if (!result.ok) return c.json(result.body, result.status);
    return c.json(result.preview, 200);
  })
  .openapi(named, async (c) => {
    const body = await readJson(c, namedPreviewBody, { allowEmpty: true });
    if (!body.ok) return c.json({ error: body.error }, 400);
    const { from, pages, records } = body.value;
    const ask = {
      from: from === 'checkpoint' ? ('checkpoint' as const) : Date.parse(from),
      pages,
      records,
    };
    const reply = await pollerObject(c.env, c.req.valid('param').name).preview(ask);
    if (reply.outcome === 'previewed') return c.json(reply.preview, 200);
    if (reply.outcome === 'misconfigured') {
      return c.json({ error: 'the poller is misconfigured', errors: reply.errors }, 409);
    }
    if (reply.outcome === 'refused') return c.json({ error: reply.error }, reply.status);
    return c.json({ error: reply.error }, 409);
  });
