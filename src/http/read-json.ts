import type { Context } from 'hono';
import type * as z from 'zod';

/** Reads and validates a JSON body; a bad one is a 400 that says what is wrong. */
export async function readJson<T extends z.ZodType>(
  c: Context,
  schema: T,
  options: { allowEmpty?: boolean } = {},
): Promise<{ ok: true; value: z.output<T> } | { ok: false; response: Response }> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== '' || !options.allowEmpty) {
    try {
      raw = JSON.parse(text);
    } catch {
      return { ok: false, response: c.json({ error: 'the body must be JSON' }, 400) };
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const error = parsed.error.issues
      .map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`)
      .join('; ');
    return { ok: false, response: c.json({ error }, 400) };
  }
  return { ok: true, value: parsed.data };
}
