import type * as z from 'zod';

/**
 * A refused request in one line: `where: what` per problem, joined by "; ". `where` is the
 * issue's path, or `part` (query, body, …) for a problem with the whole of it.
 */
export function issueLines(error: z.ZodError, part: string): string {
  return error.issues
    .map((issue) => `${issue.path.join('.') || part}: ${issue.message}`)
    .join('; ');
}
