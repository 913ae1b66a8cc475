import type { z } from '@hono/zod-openapi';

/** A JSON response with its schema. */
export function json<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { 'application/json': { schema } } };
}
