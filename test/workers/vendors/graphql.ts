import type { SeenRequest } from './vendor.ts';

/** A GraphQL request's parts, checked as any GraphQL server would before running it. */
export interface GraphQLRequest {
  query: string;
  variables: Record<string, unknown>;
}

/**
 * Reads a GraphQL POST (`{ query, variables }`), or says why it is not one. A variable the
 * request sends must be declared by the query (`$name`), as a GraphQL server requires.
 */
export function readGraphQL(request: SeenRequest): GraphQLRequest | string {
  if (request.method !== 'POST') return 'GraphQL is a POST';
  if (!request.headers.get('content-type')?.startsWith('application/json')) return 'a JSON body';
  const body = request.body;
  if (body === null || typeof body !== 'object') return 'a JSON object body';
  const { query, variables = {} } = body as { query?: unknown; variables?: unknown };
  if (typeof query !== 'string') return 'no query';
  if (variables === null || typeof variables !== 'object') return 'variables is an object';
  for (const name of Object.keys(variables)) {
    if (!new RegExp(`\\$${name}\\s*:`).test(query)) return `variable $${name} is not declared`;
  }
  return { query, variables: variables as Record<string, unknown> };
}

/** A GraphQL answer with `errors` and no data: how GraphQL servers refuse with a 200. */
export const graphQLErrors = (message: string, code: string) =>
  Response.json({ errors: [{ message, extensions: { code } }] });
