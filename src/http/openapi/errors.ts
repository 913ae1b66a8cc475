import { z } from '@hono/zod-openapi';

/** Every refusal of the API: one line, and for a refused config one line per problem. */
export const ErrorBody = z
  .object({
    error: z.string(),
    errors: z.array(z.string()).optional(),
  })
  .openapi('Error');

/** A response that is an error body, with what it means on this route. */
export function errorResponse(description: string) {
  return { description, content: { 'application/json': { schema: ErrorBody } } };
}

/** The 404 of every route under /pollers/{name}. */
export const unknownPollerResponse = errorResponse('No poller of that name, static or runtime.');

/** The 409 of an admin write whose poller was deleted and created again meanwhile (R14). */
export const otherLifeResponse = errorResponse(
  'The poller was deleted and created again while the request was under way: nothing was changed.',
);
