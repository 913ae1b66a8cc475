import type { OpenAPIHono } from '@hono/zod-openapi';
import { configJsonSchema } from '../../config/json-schema.ts';
import { operationIdOf } from './operation-id.ts';

/** What every document says about the API as a whole. */
const ABOUT = {
  openapi: '3.1.0',
  info: {
    title: 'tidemark',
    version: '0.1.0',
    description:
      'Gap-free incremental polling on Cloudflare Workers: the admin, status and read API of one deployment. Reads take STATUS_TOKEN or ADMIN_TOKEN, changes ADMIN_TOKEN, as bearer tokens.',
  },
} as const;

/** The component a route names to take one poller's config as its body (PUT /pollers/{name}). */
export const POLLER_CONFIG_REF = { $ref: '#/components/schemas/PollerConfig' } as const;

/**
 * Declares the tokens routes take, once per app: security schemes named as the secrets are.
 */
export function declareTokens(app: OpenAPIHono<{ Bindings: Env }>): void {
  const registry = app.openAPIRegistry;
  for (const [name, description] of SCHEMES) {
    registry.registerComponent('securitySchemes', name, {
      type: 'http',
      scheme: 'bearer',
      description,
    });
  }
  registry.registerComponent('securitySchemes', 'nudgeTokenQuery', {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: "The poller's NUDGE_TOKEN, for senders that cannot set a header.",
  });
}

type Document = ReturnType<OpenAPIHono<{ Bindings: Env }>['getOpenAPI31Document']>;

/**
 * The OpenAPI 3.1 document of an app, from the declarations its routes were made with: each
 * operation named (operationIdOf, for generated clients), and the poller config's schema as
 * the `PollerConfig` component (the zod schema the Worker validates with, as
 * schema/poller.schema.json is), built here rather than at startup: only this route needs it.
 */
export function openApiDocument(app: OpenAPIHono<{ Bindings: Env }>): Document {
  const document = app.getOpenAPI31Document(ABOUT);
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (!isOperation(method, operation)) continue;
      operation.operationId ??= operationIdOf(method, path);
    }
  }
  const { $schema: _dialect, ...config } = inlineDefs(configJsonSchema());
  document.components = {
    ...document.components,
    schemas: {
      ...document.components?.schemas,
      PollerConfig: {
        ...config,
        properties: {
          ...(config.properties as object),
          keep_secrets: {
            type: 'boolean',
            description:
              "PUT only, not part of the config: keep the poller's secrets although an origin they are bound to changed.",
          },
        },
      },
    },
  };
  return document;
}

/** What `$defs` of the config schema stand for: zod's recursive JSON value (`source.body`). */
const ANY_JSON = { description: 'Any JSON value.' };

/**
 * The config schema with its `$defs` inlined: zod defines a JSON value (`source.body`) as a
 * recursive `$defs` entry, whose `#/$defs/…` reference resolves only in the schema's own
 * document, and which generated clients cannot type (a type that contains itself). In the
 * API document it is any JSON value, as the Worker takes it; a `$defs` entry of any other
 * shape would need its own component, so it stops the build rather than being loosened.
 */
function inlineDefs(schema: Record<string, unknown>): Record<string, unknown> {
  const { $defs = {}, ...rest } = schema;
  for (const [name, def] of Object.entries($defs as Record<string, unknown>)) {
    const json = JSON.stringify(def);
    if (!json.includes('#/$defs/'))
      throw new Error(`config schema: $defs.${name} is not a JSON value`);
  }
  const inline = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(inline);
    if (value === null || typeof value !== 'object') return value;
    const ref = (value as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/$defs/')) return ANY_JSON;
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, inline(inner)]));
  };
  return inline(rest) as Record<string, unknown>;
}

/** The document as served at `origin`: that address is its one server. */
export function servedDocument(document: Document, origin: string): Document {
  return {
    ...document,
    servers: [{ url: origin, description: 'This deployment: where the document was read.' }],
  };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

function isOperation(method: string, value: unknown): value is { operationId?: string } {
  return METHODS.has(method) && typeof value === 'object' && value !== null;
}

const SCHEMES = [
  ['statusToken', 'STATUS_TOKEN: reads only.'],
  ['adminToken', 'ADMIN_TOKEN: reads and changes.'],
  ['nudgeToken', "The poller's own NUDGE_TOKEN secret: its nudge route only."],
] as const;
