import { z } from '@hono/zod-openapi';

/** One run as history keeps it (poller/status.ts runView). */
export const RunViewSchema = z
  .object({
    id: z.number().int().nullable(),
    folded: z.object({ first_id: z.number().int(), first_started_at: z.string() }).optional(),
    epoch: z.number().int(),
    trigger: z.string(),
    outcome: z.string(),
    started_at: z.string(),
    finished_at: z.string(),
    windows: z.number().int(),
    pages: z.number().int(),
    records: z.number().int(),
    dead_lettered: z.number().int(),
    /** source.children: the run's requests for children (of `pages`). */
    child_requests: z.number().int().optional(),
    error: z.string().nullable(),
    checkpoint: z.string().nullable(),
  })
  .openapi('Run');

/** An answer whose shape depends on its outcome (each outcome is in the docs). */
export const Outcome = z.looseObject({ outcome: z.string() });
