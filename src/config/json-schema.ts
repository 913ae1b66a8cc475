import * as z from 'zod';
import { pollerSchema } from './schema.ts';

/**
 * The JSON Schema (2020-12) of one poller's config as it is written (`io: "input"`: before
 * defaults, durations as their strings), for editors: schema/poller.schema.json is this,
 * written by `npm run schema`. What JSON Schema cannot say (a duration's range, one key
 * needing another) the Worker still checks, with the messages of `npm run check-config`.
 */
export function configJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(pollerSchema, { io: 'input', unrepresentable: 'any' }),
    title: 'tidemark poller',
    description:
      'One poller: [vars.POLLERS.<name>] in wrangler.toml, or the body of PUT /pollers/:name.',
  };
}
