import { readPath } from './dot-path.ts';

/**
 * `source.errors`: where an upstream that answers 200 to a failed request says so in the
 * body (GraphQL's `errors`). A page with errors fails, even with data beside them: GraphQL
 * returns what it could resolve, and a page missing what it could not would lose records.
 * Absent, null, false, 0, "", [] and {} there mean none.
 */
export function pageErrors(body: unknown, path: string | undefined): string | null {
  if (path === undefined) return null;
  const value = readPath(body, path);
  if (!saysSomething(value)) return null;
  return (Array.isArray(value) ? value : [value]).map(said).join('; ');
}

function saysSomething(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (value !== null && typeof value === 'object') return Object.keys(value).length > 0;
  return value !== undefined && value !== null && value !== false && value !== 0 && value !== '';
}

/**
 * One error as an operator reads it: GraphQL's `message`, with its code (`extensions.code`,
 * as Shopify's `THROTTLED`, or GitHub's `type`, as `RATE_LIMITED`); anything else as JSON.
 */
function said(error: unknown): string {
  if (typeof error === 'string') return error;
  const message = readPath(error, 'message');
  if (typeof message !== 'string') return JSON.stringify(error) ?? String(error);
  const code = readPath(error, 'extensions.code') ?? readPath(error, 'type');
  return typeof code === 'string' ? `${message} (${code})` : message;
}
