import type { OpenAPIHono } from '@hono/zod-openapi';

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

/** The OpenAPI 3.1 document of an app, from the declarations its routes were made with. */
export function openApiDocument(app: OpenAPIHono<{ Bindings: Env }>) {
  return app.getOpenAPI31Document(ABOUT);
}

const SCHEMES = [
  ['statusToken', 'STATUS_TOKEN: reads only.'],
  ['adminToken', 'ADMIN_TOKEN: reads and changes.'],
  ['nudgeToken', "The poller's own NUDGE_TOKEN secret: its nudge route only."],
] as const;
