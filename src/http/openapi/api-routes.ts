import { OpenAPIHono } from '@hono/zod-openapi';
import { validationHook } from './validation-hook.ts';

/**
 * A group of routes declared once: each route's zod schemas validate its request and
 * describe it in GET /openapi.json (openapi/document.ts).
 */
export function apiRoutes() {
  return new OpenAPIHono<{ Bindings: Env }>({ defaultHook: validationHook });
}
