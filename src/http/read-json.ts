import type { Context } from 'hono';
import type * as z from 'zod';
import { issueLines } from './issue-lines.ts';

/**
 * Reads and validates a JSON body, whatever its Content-Type says (`curl -d` says form);
 * a bad one is an error that says what is wrong, for the route's 400.
 */
export async function readJson<T extends z.ZodType>(
  c: Context,
  schema: T,
  options: { allowEmpty?: boolean } = {},
): Promise<{ ok: true; value: z.output<T> } | { ok: false; error: string }> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== '' || !options.allowEmpty) {
    try {
      raw = JSON.parse(text);
    } catch {
      return { ok: false, error: 'the body must be JSON' };
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { ok: false, error: issueLines(parsed.error, 'body') };
  return { ok: true, value: parsed.data };
}
