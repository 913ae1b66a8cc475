import type { RouteConfig } from '@hono/zod-openapi';
import * as z from 'zod';

type RequestBody = NonNullable<NonNullable<RouteConfig['request']>['body']>;

/**
 * A JSON request body declared from the zod schema its route reads it with (readJson). It is
 * declared as JSON Schema, not as the zod schema itself, because the library would then
 * refuse a body without `Content-Type: application/json` (415), and `curl -d '{…}'` sends
 * none: the API reads any body as JSON, as it always has, and says so in one 400 when not.
 */
export function jsonBody(schema: z.ZodType, description: string, required = true): RequestBody {
  const described = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  const { $schema: _dialect, ...jsonSchema } = described;
  return {
    description,
    required,
    content: { 'application/json': { schema: jsonSchema as object } },
  };
}
