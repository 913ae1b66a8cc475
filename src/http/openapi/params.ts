import { z } from '@hono/zod-openapi';

/** `{name}`: a poller, static or runtime. */
export const PollerName = z.object({
  name: z.string().meta({ description: 'The poller, as named in POLLERS or by its PUT' }),
});
