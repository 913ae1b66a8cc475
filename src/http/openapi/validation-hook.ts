import type { OpenAPIHonoOptions } from '@hono/zod-openapi';
import { issueLines } from '../issue-lines.ts';

type Options = OpenAPIHonoOptions<{ Bindings: Env }>;

/**
 * A request a route's declaration refuses (its path or query schema) is a 400 with one line
 * per problem, `where: what`, as every other check of the API answers.
 */
export const validationHook: NonNullable<Options['defaultHook']> = (result, c) => {
  if (result.success) return;
  return c.json({ error: issueLines(result.error, result.target) }, 400);
};
