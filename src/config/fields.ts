import * as z from 'zod';
import { parseDuration } from './duration.ts';
import { parseSize } from './size.ts';

/**
 * Config fields more than one module declares: the poller schema, and the paging styles and
 * delivery kinds, which each own the table of their `type`.
 */

/** A duration string ("500ms", "30s", "15m", "1h", "7d"), parsed to milliseconds. */
export const duration = z
  .string()
  // For the published JSON Schema (schema/poller.schema.json): editors check it as it is typed.
  .meta({ pattern: '^\\s*\\d+(\\.\\d+)?(ms|s|m|h|d)\\s*$', examples: ['30s', '15m', '1h'] })
  .transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `"${text}" is not a duration (use a number and a unit: "500ms", "30s", "15m", "1h", "7d")`,
      });
      return z.NEVER;
    }
    return ms;
  });

/** A size string ("512KB", "16MB"), parsed to bytes. */
export const size = z.string().transform((text, ctx) => {
  const bytes = parseSize(text);
  if (bytes === undefined || bytes < 1) {
    ctx.addIssue({
      code: 'custom',
      message: `"${text}" is not a size (use a number and a unit: "512KB", "16MB")`,
    });
    return z.NEVER;
  }
  return bytes;
});

/** A key a `type` needs: missing, it says which type needs it (`next`, `deliver`). */
export function requiredFor(table: string, type: string) {
  return z.string({ error: `is required when ${table}.type = "${type}"` }).min(1);
}
