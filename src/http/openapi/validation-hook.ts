import type { OpenAPIHonoOptions } from '@hono/zod-openapi';

type Options = OpenAPIHonoOptions<{ Bindings: Env }>;

/**
 * A request a route's declaration refuses (its path or query schema) is a 400 with one line
 * per problem, `where: what`, as every other check of the API answers.
 */
export const validationHook: NonNullable<Options['defaultHook']> = (result, c) => {
  if (result.success) return;
  const error = result.error.issues
    .map((issue) => `${issue.path.join('.') || result.target}: ${issue.message}`)
    .join('; ');
  return c.json({ error }, 400);
};
